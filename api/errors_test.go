package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/stepd/stepd/fault"
)

// TestWireErrors: the table answers every condition of package fault with
// a code of the Step Functions model (or one of notInModel) and a 4xx
// status (ServiceUnavailable, which clients retry, a 503), no two
// conditions with one code; a
// wrapped condition is answered as itself, with its message alone.
func TestWireErrors(t *testing.T) {
	m, _ := sfnModel(t)
	codes := map[string]error{}
	for _, kind := range fault.All() {
		w, ok := wireErrors[kind]
		if !ok {
			t.Errorf("%v: not in the table", kind)
			continue
		}
		if _, known := m.Errors[w.code]; !known && !notInModel[w.code] {
			t.Errorf("%v: %s is not an error of the Step Functions model", kind, w.code)
		}
		if (w.status < 400 || w.status > 499) && !(kind == fault.ErrUnavailable && w.status == 503) {
			t.Errorf("%v: status %d", kind, w.status)
		}
		if other, dup := codes[w.code]; dup {
			t.Errorf("%v and %v both answer %s", kind, other, w.code)
		}
		codes[w.code] = kind
		err := fmt.Errorf("context: %w", fault.New(kind, "it is %s", "so"))
		code, msg, ok := AWSError(err)
		if !ok || code != w.code || msg != "it is so" {
			t.Errorf("AWSError(%v) = %q, %q, %v", kind, code, msg, ok)
		}
		rec := httptest.NewRecorder()
		if got := writeError(rec, err); got != w.code || rec.Code != w.status || rec.Header().Get("X-Amzn-Errortype") != w.code {
			t.Errorf("%v: answered %s, status %d, X-Amzn-Errortype %q", kind, got, rec.Code, rec.Header().Get("X-Amzn-Errortype"))
		}
		if want := `{"__type":"` + w.code + `","message":"it is so"}`; rec.Body.String() != want {
			t.Errorf("%v: body %s, want %s", kind, rec.Body, want)
		}
	}
	if len(wireErrors) != len(fault.All()) {
		t.Errorf("the table has %d entries for %d conditions", len(wireErrors), len(fault.All()))
	}
}

// notInModel are the codes of the table that the Step Functions model
// does not declare.
var notInModel = map[string]bool{
	"ValidationException":  true, // every AWS JSON API's
	"UnsupportedOperation": true, // stepd's: a store that keeps no Map Runs
	"ServiceUnavailable":   true, // every AWS API's common error, which the SDKs retry
}

// TestInternalError: an error without a condition is an InternalFailure
// (500) with its text, as before; a bare sentinel is answered with its
// own text.
func TestInternalError(t *testing.T) {
	rec := httptest.NewRecorder()
	if code := writeError(rec, errors.New("the disk is full")); code != "InternalFailure" || rec.Code != 500 {
		t.Fatalf("answered %s, status %d", code, rec.Code)
	}
	var body map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body["__type"] != "InternalFailure" || body["message"] != "the disk is full" {
		t.Fatalf("body %s (%v)", rec.Body, err)
	}
	if _, _, ok := AWSError(errors.New("the disk is full")); ok {
		t.Fatal("AWSError: a condition for an error without one")
	}
	if code, msg, ok := AWSError(fault.ErrNoTask); !ok || code != "TaskDoesNotExist" || msg != fault.ErrNoTask.Error() {
		t.Fatalf("AWSError(ErrNoTask) = %q, %q, %v", code, msg, ok)
	}
}
