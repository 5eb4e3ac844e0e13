package strictjson

import (
	"encoding/json"
	"testing"
)

type handler struct {
	Command        []string          `json:"Command,omitempty"`
	Env            map[string]string `json:"Env,omitempty"`
	TimeoutSeconds int               `json:"TimeoutSeconds,omitempty"`
	Url            string
	Hidden         string `json:"-"`
}

type base struct {
	Region string `json:"Region"`
}

type config struct {
	Functions map[string]handler `json:"Functions"`
	Events    []handler          `json:"Events"`
	Aws       *struct {
		base
		Retries float64 `json:"Retries"`
		On      bool    `json:"On"`
	} `json:"Aws"`
}

func TestDecode(t *testing.T) {
	var c config
	if err := Decode([]byte(`{"Functions":{"f":{"Command":["x"],"timeoutseconds":3}},"Aws":{"Region":"eu-west-1","Retries":1.5,"On":true},"Events":null}`), &c); err != nil {
		t.Fatal(err)
	}
	if c.Functions["f"].TimeoutSeconds != 3 || c.Aws.Region != "eu-west-1" {
		t.Fatalf("decoded %+v", c)
	}
	for _, tt := range []struct{ doc, want string }{
		{`{"Functions":{"f":{"Comand":["x"]}}}`, `1:20: Functions.f.Comand: unknown member (did you mean Command?)`},
		{"{\n  \"Functions\": {\n    \"arn:aws:lambda:us-east-1:1:function:f\": {\n      \"Bogus\": 1\n    }\n  }\n}", `4:7: Functions."arn:aws:lambda:us-east-1:1:function:f".Bogus: unknown member (want Command, Env, TimeoutSeconds, Url)`},
		{`{"Functions":{"f":{"TimeoutSeconds":"3"}}}`, `1:37: Functions.f.TimeoutSeconds: want a whole number, got a string`},
		{`{"Functions":{"f":{"TimeoutSeconds":1.5}}}`, `1:37: Functions.f.TimeoutSeconds: want a whole number, got 1.5`},
		{`{"Functions":{"f":{"Command":"x"}}}`, `1:30: Functions.f.Command: want an array, got a string`},
		{`{"Functions":{"f":{"Command":[1]}}}`, `1:31: Functions.f.Command[0]: want a string, got a number`},
		{`{"Events":[{"Url":"u"},{"Hidden":"h"}]}`, `1:25: Events[1].Hidden: unknown member (want Command, Env, TimeoutSeconds, Url)`},
		{`{"Aws":{"Regoin":"x"}}`, `1:9: Aws.Regoin: unknown member (did you mean Region?)`},
		{`{"Aws":{"On":"yes"}}`, `1:14: Aws.On: want true or false, got a string`},
		{`{"Functions":[]}`, `1:14: Functions: want an object, got an array`},
		{`{"Functions":{}} x`, `1:18: text after the JSON value`},
		{`{"Functions":{"f":{,}}}`, `1:20: invalid JSON: invalid character ',' looking for beginning of object key string`},
		{`{"Functions":`, `1:14: invalid JSON: unexpected end of input`},
		{`[]`, `1:1: want an object, got an array`},
	} {
		var c config
		err := Decode([]byte(tt.doc), &c)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.doc, err, tt.want)
		}
	}
}

// FuzzDecode: any document either decodes as encoding/json decodes it, or
// is refused with an *Error; nothing panics.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `{"Functions":{"f":{"Comand":["x"]}}}`, `{"Events":[{"Url":"u"}]}`, `{"Aws":{"Region":"x","On":true}}`, `[1,2]`, `{"Functions":{"f":{"TimeoutSeconds":1e3}}}`, `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c config
		err := Decode(data, &c)
		if err == nil {
			var d config
			if jerr := json.Unmarshal(data, &d); jerr != nil {
				t.Fatalf("Decode took %q, which encoding/json refuses: %v", data, jerr)
			}
			return
		}
		if _, ok := err.(*Error); !ok {
			t.Fatalf("%q: %T %v", data, err, err)
		}
	})
}
