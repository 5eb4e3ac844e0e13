package template

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/stepd/stepd/value"
)

// stackNameRE is CloudFormation's rule for a stack name: a letter, then
// letters, digits and hyphens, 128 characters at most.
var stackNameRE = regexp.MustCompile(`^[A-Za-z][-A-Za-z0-9]{0,127}$`)

// DefaultStackName is the stack name of the template at path when none is
// given: "stepd-" and the file's name without its extension, each
// character CloudFormation does not allow in a stack name made a hyphen.
// It is a valid stack name, and it holds a hyphen, as the stack names of
// SAM's examples do ("sam-app"), so that an expression such as
// !Select [7, !Split ['-', !Ref AWS::StackId]] finds what it expects.
func DefaultStackName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	b := []byte("stepd-")
	for _, c := range []byte(base) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			b = append(b, c)
		} else {
			b = append(b, '-')
		}
	}
	if len(b) > 128 {
		b = b[:128]
	}
	return string(b)
}

// checkStackName refuses a name CloudFormation would refuse.
func checkStackName(name string) error {
	if !stackNameRE.MatchString(name) {
		return fmt.Errorf("the stack name %q is not valid for CloudFormation: a letter, then letters, digits and hyphens, at most 128 characters", name)
	}
	return nil
}

// digest is a hex digest of the parts, the source of the placeholder
// values that stand for what CloudFormation generates: the same template,
// stack and logical id give the same value.
func digest(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:])
}

// stackID is AWS::StackId: arn:aws:cloudformation:REGION:ACCOUNT:stack/NAME/UUID,
// the UUID (a version 4 shape, lower-case hex) drawn from the stack's
// name, region and account.
func stackID(region, account, name string) string {
	d := digest("stack", region, account, name)
	u := []byte(d[:32])
	u[12] = '4'
	u[16] = "89ab"[strings.IndexByte("0123456789abcdef", u[16])%4]
	id := string(u[:8]) + "-" + string(u[8:12]) + "-" + string(u[12:16]) + "-" + string(u[16:20]) + "-" + string(u[20:32])
	return "arn:aws:cloudformation:" + region + ":" + account + ":stack/" + name + "/" + id
}

// suffix returns n characters drawn from the digest of the parts, out of
// alphabet.
func suffix(n int, alphabet string, parts ...string) string {
	d := digest(parts...)
	out := make([]byte, n)
	for i := range out {
		v, _ := hex.DecodeString(d[2*i : 2*i+2])
		out[i] = alphabet[int(v[0])%len(alphabet)]
	}
	return string(out)
}

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	lowerDigits = "abcdefghijklmnopqrstuvwxyz0123456789"
	mixedDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

// naming is how CloudFormation names a resource of a type whose template
// gives no name: "<stack>-<LogicalId>-<SUFFIX>", cut to the type's limit
// (the stack name and logical id are shortened, never the suffix).
type naming struct {
	max   int    // the longest name the service takes
	lower bool   // the service takes lower-case names only (S3 buckets)
	fifo  string // the property that makes a FIFO queue or topic, whose name ends in ".fifo"
}

// generatedName is the placeholder for the name CloudFormation generates
// for resource id of the stack.
func (r *resolver) generatedName(id string, n naming, props *value.Object) string {
	alphabet := upperDigits
	if n.lower {
		alphabet = lowerDigits
	}
	end := "-" + suffix(12, alphabet, "name", r.opts.StackName, id)
	if n.fifo != "" {
		if v, _ := props.Get(n.fifo); v == true || v == "true" {
			end += ".fifo"
		}
	}
	base := r.opts.StackName + "-" + id
	if n.lower {
		base = strings.ToLower(base)
	}
	if len(base)+len(end) > n.max {
		base = strings.TrimRight(base[:n.max-len(end)], "-")
	}
	return base + end
}

// apiID is the placeholder for the id API Gateway gives a REST or HTTP
// API: ten lower-case letters and digits.
func (r *resolver) apiID(id string) string {
	return suffix(10, lowerDigits, "api", r.opts.StackName, id)
}

// implicit describes a resource that SAM generates from the template (it
// is not written in Resources): its type and, for the ones a template may
// name, the resource it comes from.
type implicit struct {
	typ  string // the CloudFormation type
	from string // the logical id it is generated from ("" for the APIs SAM shares)
}

// samImplicit reports whether id names a resource SAM generates: the
// roles of functions and state machines without Role
// (<LogicalId>Role), the URL of a function with FunctionUrlConfig
// (<LogicalId>Url), the REST API of Api events without RestApiId
// (ServerlessRestApi), the HTTP API of HttpApi events without ApiId
// (ServerlessHttpApi).
func (r *resolver) samImplicit(id string) (implicit, bool) {
	switch id {
	case "ServerlessRestApi":
		if r.hasEvent("Api", "RestApiId") {
			return implicit{typ: "AWS::ApiGateway::RestApi"}, true
		}
		return implicit{}, false
	case "ServerlessHttpApi":
		if r.hasEvent("HttpApi", "ApiId") {
			return implicit{typ: "AWS::ApiGatewayV2::Api"}, true
		}
		return implicit{}, false
	}
	if base, ok := strings.CutSuffix(id, "Url"); ok {
		// The function URL of a function with FunctionUrlConfig.
		bv, _ := r.resources.Get(base)
		bo, _ := bv.(*value.Object)
		pv, _ := bo.Get("Properties")
		po, _ := pv.(*value.Object)
		if str(bo, "Type") == "AWS::Serverless::Function" && po.Has("FunctionUrlConfig") {
			return implicit{typ: "AWS::Lambda::Url", from: base}, true
		}
	}
	base, ok := strings.CutSuffix(id, "Role")
	if !ok {
		return implicit{}, false
	}
	bv, ok := r.resources.Get(base)
	if !ok {
		return implicit{}, false
	}
	bo, _ := bv.(*value.Object)
	if t := str(bo, "Type"); t != "AWS::Serverless::Function" && t != SAMStateMachine {
		return implicit{}, false
	}
	pv, _ := bo.Get("Properties")
	po, _ := pv.(*value.Object)
	if po.Has("Role") {
		return implicit{}, false // SAM makes no role: the function has one
	}
	return implicit{typ: "AWS::IAM::Role", from: base}, true
}

// hasEvent reports whether a SAM function or state machine has an event
// of type typ without the property that names its own API (so SAM makes
// the shared one).
func (r *resolver) hasEvent(typ, apiProp string) bool {
	for _, res := range r.resources.All {
		o, _ := res.(*value.Object)
		if t := str(o, "Type"); t != "AWS::Serverless::Function" && t != SAMStateMachine {
			continue
		}
		pv, _ := o.Get("Properties")
		po, _ := pv.(*value.Object)
		ev, _ := po.Get("Events")
		events, _ := ev.(*value.Object)
		for _, e := range events.All {
			eo, _ := e.(*value.Object)
			if str(eo, "Type") != typ {
				continue
			}
			ep, _ := eo.Get("Properties")
			epo, _ := ep.(*value.Object)
			if !epo.Has(apiProp) {
				return true
			}
		}
	}
	return false
}

// implicitValue is the Ref (attr "") or an attribute of a resource SAM
// generates.
func (r *resolver) implicitValue(id, attr string, im implicit, at, what, hint string) (any, error) {
	switch im.typ {
	case "AWS::IAM::Role":
		name := r.generatedName(id, namings["AWS::IAM::Role"], nil)
		switch attr {
		case "":
			return name, nil
		case "Arn":
			return r.scope.Role(name), nil
		case "RoleId":
			return "AROA" + suffix(17, upperDigits, "roleid", r.opts.StackName, id), nil
		}
		return nil, fmt.Errorf("%s: %s: stepd gives the Ref, Arn and RoleId of the role SAM makes for %s; %s", at, what, im.from, hint)
	case "AWS::Lambda::Url":
		fn, err := r.getAtt(im.from, "Arn", at)
		if err != nil {
			return nil, err
		}
		switch attr {
		case "FunctionUrl":
			return "https://" + suffix(32, lowerDigits, "url", r.opts.StackName, id) + ".lambda-url." + r.scope.Region + ".on.aws/", nil
		case "FunctionArn", "":
			return fn, nil
		}
		return nil, fmt.Errorf("%s: %s: stepd gives the FunctionUrl and FunctionArn of the URL SAM makes for %s; %s", at, what, im.from, hint)
	case "AWS::ApiGateway::RestApi", "AWS::ApiGatewayV2::Api":
		api := r.apiID(id)
		switch attr {
		case "", "RestApiId", "ApiId":
			return api, nil
		case "RootResourceId":
			if im.typ == "AWS::ApiGateway::RestApi" {
				return suffix(10, lowerDigits, "root", r.opts.StackName, id), nil
			}
		case "ApiEndpoint":
			if im.typ == "AWS::ApiGatewayV2::Api" {
				return "https://" + api + ".execute-api." + r.scope.Region + ".amazonaws.com", nil
			}
		}
		return nil, fmt.Errorf("%s: %s: stepd gives the Ref of the API SAM makes (%s) and its id; %s", at, what, id, hint)
	}
	return nil, fmt.Errorf("%s: %s: %s", at, what, hint)
}
