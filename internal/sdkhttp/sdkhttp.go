// Package sdkhttp holds the HTTP client stepd gives the AWS SDK for Go, in
// the product (task/lambdasdk) and in the tests that drive stepd with the
// SDK: it works around a race of the SDK's request bodies that makes a
// call fail now and then when the server answers fast (on 127.0.0.1).
//
// The race: smithy-go wraps a request's body in a reader that, once
// closed, answers io.EOF to WriteTo. net/http's Transport, after it has
// written a body of known length, copies what is left of it to
// io.Discard (to detect a body longer than declared) on its write
// goroutine; the SDK closes the body as soon as Do returns, which is when
// the answer's headers arrive. When the server answers before that last
// copy, the copy fails with io.EOF, the Transport takes it for a failed
// write and closes the connection, and reading the answer's body fails
// with "use of closed network connection": the SDK reports a
// deserialization error for a call the server carried out (a Lambda
// Invoke that ran, a StartExecution that started).
//
// It imports nothing of stepd's and must not.
package sdkhttp

import (
	"io"
	"net/http"
)

// Doer is what the AWS SDK for Go takes as its HTTP client
// (aws.HTTPClient, smithy-go's ClientDo).
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Wrap returns c (http.DefaultClient when nil) with the race avoided: the
// body it hands the Transport is read with Read only, and a closed SDK
// body answers Read with a plain end of data.
func Wrap(c Doer) Doer {
	if c == nil {
		c = http.DefaultClient
	}
	return client{c}
}

type client struct{ c Doer }

func (c client) Do(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return c.c.Do(r)
	}
	r2 := *r // the caller's request stays as it was
	r2.Body = readOnly{r.Body}
	return c.c.Do(&r2)
}

// readOnly hides its body's WriteTo.
type readOnly struct{ rc io.ReadCloser }

func (r readOnly) Read(p []byte) (int, error) { return r.rc.Read(p) }

func (r readOnly) Close() error { return r.rc.Close() }
