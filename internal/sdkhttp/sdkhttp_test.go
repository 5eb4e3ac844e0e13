package sdkhttp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/stepd/stepd/internal/sdkhttp"
)

// sdkBody behaves as smithy-go's request body does: once closed, WriteTo
// answers io.EOF. Its WriteTo waits for Close, which puts the Transport's
// last copy of the body after Do has returned: the order the race takes
// now and then.
type sdkBody struct {
	r      *bytes.Reader
	mu     sync.Mutex
	closed chan struct{}
}

func newSDKBody(b []byte) *sdkBody {
	return &sdkBody{r: bytes.NewReader(b), closed: make(chan struct{})}
}

func (b *sdkBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.closed:
		return 0, io.EOF
	default:
	}
	return b.r.Read(p)
}

func (b *sdkBody) WriteTo(w io.Writer) (int64, error) {
	<-b.closed
	return 0, io.EOF
}

func (b *sdkBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.closed:
	default:
		close(b.closed)
	}
	return nil
}

// answerLate answers a request's headers at once and its body once the
// test says so (release), after the client has closed its request body.
func answerLate(release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, `{"answer":"`+strings.Repeat("x", 64<<10)+`"}`)
	})
}

// call sends one request with an SDK-like body through c, closes the body
// as the SDK does once Do returns, and reads the answer.
func call(t *testing.T, c sdkhttp.Doer) error {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(answerLate(release))
	defer srv.Close()
	defer close(release)
	payload := []byte(`{"executionArn":"arn:aws:states:us-east-1:123456789012:execution:m:e"}`)
	body := newSDKBody(payload)
	req, err := http.NewRequest(http.MethodPost, srv.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(payload))
	resp, err := c.Do(req)
	body.Close()
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	release <- struct{}{}
	_, err = io.ReadAll(resp.Body)
	return err
}

// TestRaceOrdered puts the race's steps in its bad order: the plain
// client loses the answer (the test checks that it still does, so that
// the workaround is still needed and the test can fail), the wrapped one
// reads it.
func TestRaceOrdered(t *testing.T) {
	plain := &http.Client{Transport: &http.Transport{}}
	if err := call(t, plain); err == nil {
		t.Log("the plain client read the answer: net/http no longer fails a request whose body ends with io.EOF from WriteTo after Close")
	} else {
		t.Logf("plain client: %v", err)
	}
	if err := call(t, sdkhttp.Wrap(&http.Client{Transport: &http.Transport{}})); err != nil {
		t.Fatalf("wrapped client: %v", err)
	}
}

// capture is an HTTP client that keeps the last request's body and answers
// as the Step Functions API does.
type capture struct {
	body   io.ReadCloser
	answer string
}

func (c *capture) Do(r *http.Request) (*http.Response, error) {
	c.body = r.Body
	_, _ = io.Copy(io.Discard, r.Body)
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body: io.NopCloser(strings.NewReader(c.answer)), ContentLength: int64(len(c.answer)), Request: r}, nil
}

// TestSDKBodyPremise checks, with the real SDK, what sdkBody models: the
// request body the SDK hands its HTTP client answers WriteTo with io.EOF
// once the SDK has closed it. When an SDK release changes that, the test
// says so, and Wrap may no longer be needed.
func TestSDKBodyPremise(t *testing.T) {
	c := &capture{answer: `{"executionArn":"arn:aws:states:us-east-1:123456789012:execution:m:e","startDate":1}`}
	cl := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1"), RetryMaxAttempts: 1, HTTPClient: c,
		Credentials: credentials.NewStaticCredentialsProvider("x", "x", "")})
	if _, err := cl.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: aws.String("arn:aws:states:us-east-1:123456789012:stateMachine:m")}); err != nil {
		t.Fatal(err)
	}
	wt, ok := c.body.(io.WriterTo)
	if !ok {
		t.Skipf("the SDK's request body (%T) has no WriteTo: the race Wrap avoids is gone", c.body)
	}
	if _, err := wt.WriteTo(io.Discard); err != io.EOF {
		t.Skipf("the SDK's request body, closed, answers WriteTo with %v, not io.EOF: the race Wrap avoids is gone", err)
	}
	// Through Wrap, the Transport sees no WriteTo, and Read answers a plain
	// end of data.
	w := &capture{answer: c.answer}
	cl = sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1"), RetryMaxAttempts: 1, HTTPClient: sdkhttp.Wrap(w),
		Credentials: credentials.NewStaticCredentialsProvider("x", "x", "")})
	if _, err := cl.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: aws.String("arn:aws:states:us-east-1:123456789012:stateMachine:m")}); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.body.(io.WriterTo); ok {
		t.Fatalf("Wrap hands the Transport a body with WriteTo (%T)", w.body)
	}
	if n, err := w.body.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("the wrapped body, closed, answers Read with %d, %v; want 0, io.EOF", n, err)
	}
}
