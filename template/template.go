// Package template loads the state machines of an AWS SAM or CloudFormation
// template (YAML with the short-form tags !Sub, !Ref, !GetAtt … or JSON):
// AWS::Serverless::StateMachine (Definition, DefinitionUri as a local file,
// DefinitionSubstitutions) and AWS::StepFunctions::StateMachine
// (Definition, DefinitionString, DefinitionSubstitutions).
//
// Intrinsic functions (Ref, Fn::Sub, Fn::Join, Fn::GetAtt, Fn::If and the
// conditions, Fn::Select, Fn::Split, Fn::FindInMap, Fn::GetAZs,
// Fn::Base64, Fn::ToJsonString, Fn::Length) are resolved from the
// parameters' defaults, the values the caller gives (Options.Parameters),
// and the pseudo parameters (AWS::Region, AWS::AccountId, AWS::Partition,
// AWS::StackName, AWS::StackId, AWS::URLSuffix, AWS::NoValue,
// AWS::NotificationARNs; AWS::StackId is built from the stack name). A Ref
// or Fn::GetAtt of another resource resolves to what CloudFormation would
// give when that is deterministic (a function whose FunctionName is given
// gives its name and ARN; a state machine of the template gives the ARN
// stepd gives it), and to a placeholder of the same shape where
// CloudFormation or SAM would generate it (sam.go): the name of a
// function, table, queue, topic, bucket, log group, cluster or role
// without one (<stack>-<LogicalId>-<SUFFIX>), and the resources SAM makes
// (<LogicalId>Role, ServerlessRestApi, ServerlessHttpApi). Anything else is
// an error naming the logical id, the attribute and the property path;
// the caller can give any of these values with a parameter named
// LogicalId (for Ref) or LogicalId.Attribute (for Fn::GetAtt).
//
// Properties that only deploy (Policies, Events, PermissionsBoundary …)
// are accepted and not evaluated; those the Step Functions API keeps
// (role, tags, logging, tracing, encryption) are resolved and returned;
// unknown properties and DefinitionS3Location (an S3 object) are refused
// by name.
//
// It must not import interp beside it, nor anything above: the engine and
// the backends, the server (service, api …), conformance, bench,
// cmd/stepd.
package template

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/definition"
	"github.com/stepd/stepd/internal/yamlvalue"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

// Resource types of state machines.
const (
	CFNStateMachine = "AWS::StepFunctions::StateMachine"
	SAMStateMachine = "AWS::Serverless::StateMachine"
)

// Options are the values a template is resolved with.
type Options struct {
	Region, Account string // default: arn's defaults
	// StackName is AWS::StackName (default: the template file's name
	// without extension).
	StackName string
	// Parameters are the template's parameters, pseudo parameters
	// (AWS::StackName …) and values of other resources, those SAM
	// generates included: LogicalId for its Ref, LogicalId.Attribute for
	// an Fn::GetAtt.
	Parameters map[string]string
	// Warn, when set, is told of what the template holds that is read but
	// may be a mistake (a YAML key given twice: the last value is kept, as
	// SAM CLI keeps it); nil makes it an error.
	Warn definition.Warn
}

// StateMachine is one state machine of a template.
type StateMachine struct {
	LogicalID    string
	ResourceType string
	Name         string // the Name/StateMachineName property, or the logical id
	Type         string // STANDARD or EXPRESS
	// Definition is the definition's JSON text with the
	// DefinitionSubstitutions applied.
	Definition string
	// DefinitionFile is the file DefinitionUri named ("" for an inline
	// definition).
	DefinitionFile string
	// Pointer locates the definition in the template ("" for a file):
	// /Resources/ID/Properties/Definition.
	Pointer string
	// Substitutions are the resolved DefinitionSubstitutions.
	Substitutions definition.Substitutions

	RoleARN string
	Tags    map[string]string
	// Logging, Tracing and Encryption are the API's
	// loggingConfiguration, tracingConfiguration and
	// encryptionConfiguration (member names as the API writes them), nil
	// when the template gives none.
	Logging, Tracing, Encryption *value.Object
	// AutoPublishAlias is SAM's alias name (SAM publishes a version and
	// points this alias at it), "" when not given.
	AutoPublishAlias string
}

// IsTemplate reports whether a parsed document is a template rather than
// a state machine definition: it has Resources and no States.
func IsTemplate(v any) bool {
	o, ok := v.(*value.Object)
	return ok && o.Has("Resources") && !o.Has("States")
}

// Read parses a template file's contents: JSON, or YAML with the
// CloudFormation short-form tags; warn as Options.Warn.
func Read(path string, data []byte, warn definition.Warn) (any, error) {
	if definition.IsYAML(path, data) {
		v, err := yamlvalue.ParseWarn(data, shortForm, definition.YAMLWarn(path, warn))
		if err != nil {
			return nil, fmt.Errorf("%s:%w", path, err)
		}
		return v, nil
	}
	v, err := value.Parse(data)
	if err != nil {
		return nil, value.Locate(path, data, err)
	}
	return v, nil
}

// functions are the intrinsic functions a short-form tag may name.
var functions = []string{"Base64", "Cidr", "FindInMap", "GetAtt", "GetAZs", "ImportValue", "Join", "Select", "Split", "Sub", "Transform", "And", "Equals", "If", "Not", "Or", "ToJsonString", "Length"}

// shortForm turns a short-form tag into the function's full form.
func shortForm(tag string, v any) (any, error) {
	name := strings.TrimPrefix(tag, "!")
	switch {
	case name == "Ref" || name == "Condition":
		return value.ObjectOf(name, v), nil
	case name == "GetAtt":
		if s, ok := v.(string); ok {
			id, attr, ok := strings.Cut(s, ".")
			if !ok {
				return nil, fmt.Errorf("want LogicalId.Attribute, got %q", s)
			}
			v = []any{id, attr}
		}
		return value.ObjectOf("Fn::GetAtt", v), nil
	case slices.Contains(functions, name):
		return value.ObjectOf("Fn::"+name, v), nil
	}
	return nil, fmt.Errorf("unknown tag (CloudFormation's are !Ref, !Condition, !%s)", strings.Join(functions, ", !"))
}

// Load reads the template at path and returns its state machines, in
// template order.
func Load(path string, opts Options) ([]*StateMachine, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, opts)
}

// Parse returns the state machines of the template data, read from path
// (DefinitionUri files are relative to its folder).
func Parse(path string, data []byte, opts Options) ([]*StateMachine, error) {
	doc, err := Read(path, data, opts.Warn)
	if err != nil {
		return nil, err
	}
	root, ok := doc.(*value.Object)
	if !ok || !root.Has("Resources") {
		return nil, fmt.Errorf("%s: not a CloudFormation or SAM template (no Resources)", path)
	}
	v, given := opts.Parameters["AWS::StackName"]
	if given {
		opts.StackName = v // AWS::StackId follows it
	} else if opts.StackName == "" {
		opts.StackName = DefaultStackName(path)
	}
	if err := checkStackName(opts.StackName); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r, err := newResolver(root, opts, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []*StateMachine
	for i := 0; i < r.resources.Len(); i++ {
		id, res := r.resources.At(i)
		o, _ := res.(*value.Object)
		typ := str(o, "Type")
		if typ != CFNStateMachine && typ != SAMStateMachine {
			continue
		}
		if on, err := r.resourceExists(id); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		} else if !on {
			continue
		}
		sm, err := r.stateMachine(id, typ, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, prev := range out {
			if prev.Name == sm.Name {
				return nil, fmt.Errorf("%s: the state machines %s and %s are both named %s", path, prev.LogicalID, id, sm.Name)
			}
		}
		out = append(out, sm)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: the template has no state machine (%s or %s)", path, SAMStateMachine, CFNStateMachine)
	}
	return out, nil
}

// Find returns the state machine named name (its name or logical id), or
// the only one when name is empty.
func Find(sms []*StateMachine, name string) (*StateMachine, error) {
	var names []string
	for _, sm := range sms {
		if name != "" && (sm.Name == name || sm.LogicalID == name) {
			return sm, nil
		}
		names = append(names, sm.LogicalID)
	}
	if name == "" && len(sms) == 1 {
		return sms[0], nil
	}
	if name == "" {
		return nil, fmt.Errorf("the template has %d state machines (%s): choose one with --state-machine", len(sms), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("the template has no state machine %q (it has %s)", name, strings.Join(names, ", "))
}

func str(o *value.Object, k string) string {
	v, _ := o.Get(k)
	s, _ := v.(string)
	return s
}

// Properties of the two state machine resources: kept (resolved and
// returned), or deploy-only (accepted, not evaluated).
var (
	cfnProps = map[string]bool{
		"Definition": true, "DefinitionString": true, "DefinitionS3Location": true, "DefinitionSubstitutions": true,
		"RoleArn": true, "StateMachineName": true, "StateMachineType": true, "Tags": true,
		"LoggingConfiguration": true, "TracingConfiguration": true, "EncryptionConfiguration": true,
	}
	samProps = map[string]bool{
		"Definition": true, "DefinitionUri": true, "DefinitionSubstitutions": true, "Name": true, "Type": true,
		"Role": true, "Tags": true, "Logging": true, "Tracing": true, "AutoPublishAlias": true,
		// Deploy-only: who may call what, and what triggers executions.
		"Policies": false, "PermissionsBoundary": false, "RolePath": false, "Events": false,
		"DeploymentPreference": false, "PropagateTags": false, "UseAliasAsEventTarget": false,
	}
)

func (r *resolver) stateMachine(id, typ string, res *value.Object) (*StateMachine, error) {
	base := "/Resources/" + id + "/Properties"
	sm := &StateMachine{LogicalID: id, ResourceType: typ, Type: "STANDARD"}
	pv, _ := res.Get("Properties")
	props, ok := pv.(*value.Object)
	if !ok {
		if pv != nil {
			return nil, fmt.Errorf("%s: Properties must be a mapping", base)
		}
		props = value.NewObject(0)
	}
	known := cfnProps
	if typ == SAMStateMachine {
		known = samProps
	}
	for _, k := range props.Keys() {
		if _, ok := known[k]; !ok {
			var names []string
			for n := range known {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("%s/%s: %s has no property %s (it has %s)", base, k, typ, k, strings.Join(names, ", "))
		}
	}
	get := func(k string) (any, bool, error) {
		v, ok := props.Get(k)
		if !ok {
			return nil, false, nil
		}
		v, err := r.resolve(v, base+"/"+k)
		if err != nil {
			return nil, false, err
		}
		if v == noValue {
			return nil, false, nil
		}
		return v, true, nil
	}
	getString := func(k string) (string, bool, error) {
		v, ok, err := get(k)
		if err != nil || !ok {
			return "", ok, err
		}
		s, isStr := v.(string)
		if !isStr {
			return "", false, fmt.Errorf("%s/%s: want a string, got %s", base, k, value.KindOf(v))
		}
		return s, true, nil
	}
	nameProp, typeProp, roleProp := "StateMachineName", "StateMachineType", "RoleArn"
	logProp, traceProp := "LoggingConfiguration", "TracingConfiguration"
	if typ == SAMStateMachine {
		nameProp, typeProp, roleProp, logProp, traceProp = "Name", "Type", "Role", "Logging", "Tracing"
	}
	var err error
	if sm.Name, _, err = getString(nameProp); err != nil {
		return nil, err
	}
	if sm.Name == "" {
		sm.Name = id
	}
	if t, ok, err := getString(typeProp); err != nil {
		return nil, err
	} else if ok {
		if t != "STANDARD" && t != "EXPRESS" {
			return nil, fmt.Errorf("%s/%s: want STANDARD or EXPRESS, got %q", base, typeProp, t)
		}
		sm.Type = t
	}
	if sm.RoleARN, _, err = getString(roleProp); err != nil {
		return nil, err
	}
	if sm.RoleARN == "" && typ == SAMStateMachine {
		// SAM creates the role <LogicalId>Role from Policies.
		v, err := r.getAtt(id+"Role", "Arn", base+"/Role")
		if err != nil {
			return nil, err
		}
		sm.RoleARN, _ = scalarText(v)
	}
	if sm.AutoPublishAlias, _, err = getString("AutoPublishAlias"); err != nil {
		return nil, err
	}
	if sm.Tags, err = r.tags(props, base, typ, get); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		prop string
		dst  **value.Object
	}{{logProp, &sm.Logging}, {traceProp, &sm.Tracing}, {"EncryptionConfiguration", &sm.Encryption}} {
		v, ok, err := get(c.prop)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		o, isObj := apiShape(v).(*value.Object)
		if !isObj {
			return nil, fmt.Errorf("%s/%s: want a mapping, got %s", base, c.prop, value.KindOf(v))
		}
		*c.dst = o
	}
	if sm.Definition, err = r.definitionText(sm, props, base, get); err != nil {
		return nil, err
	}
	return sm, nil
}

// tags reads CloudFormation's [{Key, Value}] or SAM's {Key: Value}.
func (r *resolver) tags(props *value.Object, base, typ string, get func(string) (any, bool, error)) (map[string]string, error) {
	v, ok, err := get("Tags")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if typ == SAMStateMachine {
		out["stateMachine:createdBy"] = "SAM" // as SAM adds
	}
	if !ok {
		if len(out) == 0 {
			return nil, nil
		}
		return out, nil
	}
	bad := fmt.Errorf("%s/Tags: want a list of {Key, Value} or a mapping of strings", base)
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			o, ok := e.(*value.Object)
			if !ok {
				return nil, bad
			}
			k, kok := mustString(o, "Key")
			val, vok := mustString(o, "Value")
			if !kok || !vok {
				return nil, bad
			}
			out[k] = val
		}
	case *value.Object:
		for i := 0; i < v.Len(); i++ {
			k, e := v.At(i)
			s, ok := scalarText(e)
			if !ok {
				return nil, bad
			}
			out[k] = s
		}
	default:
		return nil, bad
	}
	return out, nil
}

func mustString(o *value.Object, k string) (string, bool) {
	v, ok := o.Get(k)
	if !ok {
		return "", false
	}
	return scalarText(v)
}

// apiShape writes a CloudFormation configuration as the API does: member
// names start with a lower-case letter (Level → level,
// CloudWatchLogsLogGroup → cloudWatchLogsLogGroup).
func apiShape(v any) any {
	switch v := v.(type) {
	case *value.Object:
		o := value.NewObject(v.Len())
		for i := 0; i < v.Len(); i++ {
			k, e := v.At(i)
			if k != "" {
				k = strings.ToLower(k[:1]) + k[1:]
			}
			o.Set(k, apiShape(e))
		}
		return o
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = apiShape(e)
		}
		return out
	}
	return v
}

func (r *resolver) definitionText(sm *StateMachine, props *value.Object, base string, get func(string) (any, bool, error)) (string, error) {
	var given []string
	for _, k := range []string{"Definition", "DefinitionString", "DefinitionUri", "DefinitionS3Location"} {
		if props.Has(k) {
			given = append(given, k)
		}
	}
	switch len(given) {
	case 0:
		return "", fmt.Errorf("%s: the state machine has no definition (Definition, DefinitionString or DefinitionUri)", base)
	case 1:
	default:
		return "", fmt.Errorf("%s: give one of %s, not both", base, strings.Join(given, " and "))
	}
	var text string
	switch k := given[0]; k {
	case "DefinitionS3Location":
		return "", fmt.Errorf("%s/DefinitionS3Location: stepd reads no S3 objects; give the definition with Definition or DefinitionString (or DefinitionUri, a local file, with SAM)", base)
	case "Definition":
		v, _, err := get(k)
		if err != nil {
			return "", err
		}
		if _, ok := v.(*value.Object); !ok {
			return "", fmt.Errorf("%s/Definition: want a mapping (the definition), got %s", base, value.KindOf(v))
		}
		text = value.String(v)
		sm.Pointer = base + "/Definition"
	case "DefinitionString":
		v, _, err := get(k)
		if err != nil {
			return "", err
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s/DefinitionString: want a string, got %s", base, value.KindOf(v))
		}
		text = s
		sm.Pointer = base + "/DefinitionString"
	case "DefinitionUri":
		v, _, err := get(k)
		if err != nil {
			return "", err
		}
		uri, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s/DefinitionUri: stepd reads local files only: want a path relative to the template, got %s (an S3 location)", base, value.KindOf(v))
		}
		if strings.HasPrefix(uri, "s3://") {
			return "", fmt.Errorf("%s/DefinitionUri: stepd reads no S3 objects (%s): give a path relative to the template", base, uri)
		}
		path := uri
		if !filepath.IsAbs(path) {
			path = filepath.Join(r.dir, path)
		}
		data, err := readDefinitionFile(path)
		if err != nil {
			return "", fmt.Errorf("%s/DefinitionUri: %w", base, err)
		}
		js, err := definition.ToJSON(path, data, r.opts.Warn)
		if err != nil {
			return "", fmt.Errorf("%s/DefinitionUri: %s:%w", base, path, err)
		}
		text = string(js)
		sm.DefinitionFile = path
	}
	v, ok, err := get("DefinitionSubstitutions")
	if err != nil {
		return "", err
	}
	if !ok {
		return text, nil
	}
	o, isObj := v.(*value.Object)
	if !isObj {
		return "", fmt.Errorf("%s/DefinitionSubstitutions: want a mapping, got %s", base, value.KindOf(v))
	}
	sm.Substitutions = definition.Substitutions{}
	for i := 0; i < o.Len(); i++ {
		k, e := o.At(i)
		if err := sm.Substitutions.Set(k, e); err != nil {
			return "", fmt.Errorf("%s/DefinitionSubstitutions/%s: %w", base, k, err)
		}
	}
	text, err = definition.Substitute(text, sm.Substitutions)
	if err != nil {
		return "", fmt.Errorf("%s/DefinitionSubstitutions: %w", base, err)
	}
	return text, nil
}

// readDefinitionFile reads a regular file of at most AWS's definition
// limit (in bytes of up to 4 per character).
func readDefinitionFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	const limit = 4 * validate.MaxDefinitionLength
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%s is larger than AWS's definition limit", path)
	}
	return data, nil
}

// noValue marks AWS::NoValue.
var noValue = &struct{ _ byte }{}

var errCycle = errors.New("refers to itself")

// scope is used by the resolver for ARNs.
func scopeOf(o Options) arn.Scope { return arn.Scope{Region: o.Region, Account: o.Account}.Or() }
