package arn_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stepd/stepd/arn"
)

func TestBuild(t *testing.T) {
	s := arn.Scope{Region: "eu-west-3", Account: "111122223333"}
	for _, tt := range []struct{ got, want string }{
		{s.StateMachine("sm"), "arn:aws:states:eu-west-3:111122223333:stateMachine:sm"},
		{s.Execution("sm", "e1"), "arn:aws:states:eu-west-3:111122223333:execution:sm:e1"},
		{s.Express("sm", "e1", "f00"), "arn:aws:states:eu-west-3:111122223333:express:sm:e1:f00"},
		{s.Express("sm", "e1", ""), "arn:aws:states:eu-west-3:111122223333:express:sm:e1"},
		{s.Activity("act"), "arn:aws:states:eu-west-3:111122223333:activity:act"},
		{s.MapRun("sm", "Map", "r1"), "arn:aws:states:eu-west-3:111122223333:mapRun:sm/Map:r1"},
		{s.Role("stepd"), "arn:aws:iam::111122223333:role/stepd"},
		{arn.Default.StateMachine("x"), "arn:aws:states:us-east-1:123456789012:stateMachine:x"},
		{arn.Scope{Region: "ap-south-1"}.Or().Activity("a"), "arn:aws:states:ap-south-1:123456789012:activity:a"},
		{arn.Scope{Account: "1"}.Or().Role("r"), "arn:aws:iam::1:role/r"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want arn.ARN
		exec bool
	}{
		{"arn:aws:states:us-east-1:1:stateMachine:sm", arn.ARN{Partition: "aws", Service: "states", Region: "us-east-1", Account: "1",
			Resource: "stateMachine:sm", Type: "stateMachine", Names: []string{"sm"}}, false},
		{"arn:aws:states:us-east-1:1:execution:sm:e", arn.ARN{Partition: "aws", Service: "states", Region: "us-east-1", Account: "1",
			Resource: "execution:sm:e", Type: "execution", Names: []string{"sm", "e"}}, true},
		{"arn:aws:states:us-east-1:1:express:sm:e:id", arn.ARN{Partition: "aws", Service: "states", Region: "us-east-1", Account: "1",
			Resource: "express:sm:e:id", Type: "express", Names: []string{"sm", "e", "id"}}, true},
		{"arn:aws:states:r:1:mapRun:sm/M:id", arn.ARN{Partition: "aws", Service: "states", Region: "r", Account: "1",
			Resource: "mapRun:sm/M:id", Type: "mapRun", Names: []string{"sm/M", "id"}}, false},
		{"arn:aws:iam::1:role/stepd", arn.ARN{Partition: "aws", Service: "iam", Account: "1", Resource: "role/stepd", Type: "role"}, false},
		{"arn:aws:states:::lambda:invoke", arn.ARN{Partition: "aws", Service: "states", Resource: "lambda:invoke", Type: "lambda", Names: []string{"invoke"}}, false},
	} {
		got, err := arn.Parse(tt.in)
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, want %+v", tt.in, got, tt.want)
		}
		if got.IsExecution() != tt.exec {
			t.Errorf("%s: IsExecution %v", tt.in, got.IsExecution())
		}
	}
	for _, bad := range []string{"", "arn", "arn:aws:states:r:1", "arn:aws:states:r:1:", "x:aws:states:r:1:stateMachine:a", "arn::states:r:1:a"} {
		if _, err := arn.Parse(bad); !errors.Is(err, arn.ErrInvalid) {
			t.Errorf("%q: error %v, want ErrInvalid", bad, err)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	s := arn.Default
	a, err := arn.Parse(s.Express("m", "n", "i"))
	if err != nil || a.Scope() != s || a.Names[0] != "m" || a.Names[1] != "n" || a.Names[2] != "i" {
		t.Fatalf("%+v %v", a, err)
	}
}

// FuzzParse: Parse never panics, and what it accepts has a partition, a
// service and a resource, and joins back to the text.
func FuzzParse(f *testing.F) {
	f.Add("arn:aws:states:us-east-1:123456789012:execution:sm:name")
	f.Add("arn:aws:states:eu-west-1:1:express:sm:name:id")
	f.Add("arn:aws:states:us-east-1:1:mapRun:sm/label:id")
	f.Add("arn:aws:states:::lambda:invoke")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := arn.Parse(s)
		if err != nil {
			if !errors.Is(err, arn.ErrInvalid) {
				t.Fatalf("Parse(%q): %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		if a.Partition == "" || a.Service == "" || a.Resource == "" {
			t.Fatalf("Parse(%q) accepted an ARN without partition, service or resource: %+v", s, a)
		}
		if back := "arn:" + a.Partition + ":" + a.Service + ":" + a.Region + ":" + a.Account + ":" + a.Resource; back != s {
			t.Fatalf("Parse(%q) parts join to %q", s, back)
		}
	})
}

func TestService(t *testing.T) {
	s := arn.Scope{Region: "eu-west-1", Account: "111122223333"}
	for _, c := range []struct{ got, want string }{
		{s.Service("lambda", "function:f", false, false), "arn:aws:lambda:eu-west-1:111122223333:function:f"},
		{s.Service("iam", "role/r", true, false), "arn:aws:iam::111122223333:role/r"},
		{s.Service("s3", "b", true, true), "arn:aws:s3:::b"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

func TestTypeOf(t *testing.T) {
	for _, s := range []string{
		"arn:aws:states:us-east-1:123456789012:execution:sm:e",
		"arn:aws:states:us-east-1:123456789012:express:sm:e:f",
		"arn:aws:states:us-east-1:123456789012:stateMachine:sm",
		"arn:aws:states:us-east-1:123456789012:stateMachine:sm:1",
		"arn:aws:lambda:us-east-1:123456789012:function:f",
		"arn:aws:s3:::bucket/key",
		"arn:aws:iam::123456789012:role/r",
		"arn:aws:states:us-east-1:1",
		"not an arn",
		"x:aws:states:us-east-1:1:execution:sm:e",
		"arn::states:us-east-1:1:execution:sm:e",
		"arn:aws:states:us-east-1:1:",
		"arn:aws::us-east-1:1:execution:sm:e",
		"arn:aws:states:::execution",
		"arn:aws:states::::/x",
		"arn:",
		"arn:aws:states:r:a:execution/sm",
		"",
	} {
		want := ""
		if a, err := arn.Parse(s); err == nil {
			want = a.Type
		}
		if got := arn.TypeOf(s); got != want {
			t.Errorf("TypeOf(%q) = %q, Parse's type %q", s, got, want)
		}
	}
}

// FuzzTypeOf checks TypeOf against Parse's type.
func FuzzTypeOf(f *testing.F) {
	f.Add("arn:aws:states:us-east-1:123456789012:execution:sm:e")
	f.Add("arn:aws:s3:::bucket/key")
	f.Fuzz(func(t *testing.T, s string) {
		want := ""
		if a, err := arn.Parse(s); err == nil {
			want = a.Type
		}
		if got := arn.TypeOf(s); got != want {
			t.Errorf("TypeOf(%q) = %q, Parse's type %q", s, got, want)
		}
	})
}

// FuzzStatesNames checks StatesNames against Parse.
func FuzzStatesNames(f *testing.F) {
	f.Add("arn:aws:states:us-east-1:123456789012:execution:sm:e")
	f.Add("arn:aws:states:us-east-1:123456789012:stateMachine:sm")
	f.Add("arn:aws:states:us-east-1:123456789012:stateMachine")
	f.Add("arn:aws:states:::stateMachine:")
	f.Add("arn:aws:s3:::bucket/key")
	f.Fuzz(func(t *testing.T, s string) {
		var wantType, wantNames string
		a, err := arn.Parse(s)
		wantOK := err == nil && a.Service == "states" && len(a.Names) > 0
		if wantOK {
			wantType, wantNames = a.Type, strings.Join(a.Names, ":")
		}
		typ, names, ok := arn.StatesNames(s)
		if typ != wantType || names != wantNames || ok != wantOK {
			t.Errorf("StatesNames(%q) = %q %q %v, Parse's %q %q %v", s, typ, names, ok, wantType, wantNames, wantOK)
		}
	})
}

func TestStatesNamesAllocs(t *testing.T) {
	s := "arn:aws:states:us-east-1:123456789012:execution:sm:e"
	if n := testing.AllocsPerRun(100, func() { arn.StatesNames(s) }); n != 0 {
		t.Errorf("StatesNames allocates %v times", n)
	}
}
