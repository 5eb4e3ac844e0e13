package lambdashape

import (
	"testing"

	"github.com/stepd/stepd/value"
)

// FuzzAnswer: any handler answer is recognised as a Lambda-shaped error,
// an error object, or neither, without panicking; a Lambda-shaped error is
// also an error object, names a non-empty error, and its cause is JSON.
func FuzzAnswer(f *testing.F) {
	f.Add([]byte(`{"errorType":"CustomError","errorMessage":"boom"}`))
	f.Add([]byte(`{"Error":"My.Error","Cause":{"why":1}}`))
	f.Add([]byte(`{"errorType":"","errorMessage":"x"}`))
	f.Add([]byte(`{"errorType":1}`))
	f.Add([]byte(`[{"errorType":"E"}]`))
	f.Add([]byte(`{"errorType":"E"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		shaped, isShaped := ShapedError(data)
		obj, isObj := ErrorResult(data)
		if isShaped {
			if shaped.Error == "" || !isObj || obj.Error != shaped.Error {
				t.Fatalf("%q: shaped %+v, error object %+v %v", data, shaped, obj, isObj)
			}
			if _, err := value.ParseString(shaped.Cause); err != nil {
				t.Fatalf("%q: cause %q is not JSON: %v", data, shaped.Cause, err)
			}
		}
		if isObj && obj.Error == "" {
			t.Fatalf("%q: an error object without an error: %+v", data, obj)
		}
		_ = FunctionError(data)
		_ = PayloadResult(data, "fuzz")
	})
}
