package template

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/value"
)

// resolver evaluates a template's intrinsic functions.
type resolver struct {
	root       *value.Object
	resources  *value.Object
	mappings   *value.Object
	conditions *value.Object
	params     map[string]any // template parameters, pseudo parameters and user values
	user       map[string]string
	scope      arn.Scope
	opts       Options
	dir        string
	condMemo   map[string]bool
	visiting   map[string]bool // conditions and resource names being evaluated
}

func newResolver(root *value.Object, opts Options, dir string) (*resolver, error) {
	r := &resolver{root: root, opts: opts, dir: dir, scope: scopeOf(opts), params: map[string]any{},
		user: map[string]string{}, condMemo: map[string]bool{}, visiting: map[string]bool{}}
	var ok bool
	rv, _ := root.Get("Resources")
	if r.resources, ok = rv.(*value.Object); !ok {
		return nil, fmt.Errorf("/Resources: want a mapping")
	}
	mv, _ := root.Get("Mappings")
	r.mappings, _ = mv.(*value.Object)
	cv, _ := root.Get("Conditions")
	r.conditions, _ = cv.(*value.Object)
	pseudo := map[string]any{
		"AWS::Region": r.scope.Region, "AWS::AccountId": r.scope.Account, "AWS::Partition": "aws",
		"AWS::URLSuffix": "amazonaws.com", "AWS::StackName": opts.StackName, "AWS::StackId": stackID(r.scope.Region, r.scope.Account, opts.StackName),
		"AWS::NotificationARNs": []any{}, "AWS::NoValue": noValue,
	}
	for k, v := range pseudo {
		r.params[k] = v
	}
	pv, _ := root.Get("Parameters")
	declared, _ := pv.(*value.Object)
	for i := 0; i < declared.Len(); i++ {
		name, d := declared.At(i)
		decl, _ := d.(*value.Object)
		if decl == nil {
			return nil, fmt.Errorf("/Parameters/%s: want a mapping", name)
		}
		typ := str(decl, "Type")
		text, given := opts.Parameters[name]
		if !given {
			dv, has := decl.Get("Default")
			if !has {
				r.params[name] = missingParam(name)
				continue
			}
			var ok bool
			if text, ok = scalarText(dv); !ok {
				if l, isList := dv.([]any); isList && strings.HasPrefix(typ, "List<") || typ == "CommaDelimitedList" {
					var parts []string
					for _, e := range l {
						s, _ := scalarText(e)
						parts = append(parts, s)
					}
					text = strings.Join(parts, ",")
				} else {
					return nil, fmt.Errorf("/Parameters/%s/Default: want a string or number, got %s", name, value.KindOf(dv))
				}
			}
		}
		if av, ok := decl.Get("AllowedValues"); ok && given {
			allowed, _ := av.([]any)
			found := false
			for _, a := range allowed {
				if s, _ := scalarText(a); s == text {
					found = true
				}
			}
			if !found {
				return nil, fmt.Errorf("parameter %s: %q is not one of its AllowedValues", name, text)
			}
		}
		if strings.HasPrefix(typ, "List<") || typ == "CommaDelimitedList" {
			var l []any
			for _, p := range strings.Split(text, ",") {
				l = append(l, strings.TrimSpace(p))
			}
			r.params[name] = l
		} else {
			r.params[name] = text
		}
	}
	for k, v := range opts.Parameters {
		switch _, isParam := r.params[k]; {
		case declared.Has(k):
		case isParam:
			r.params[k] = v // a pseudo parameter
		default:
			id, _, _ := strings.Cut(k, ".")
			if _, generated := r.samImplicit(id); !r.resources.Has(id) && !generated {
				return nil, fmt.Errorf("--parameter %s: the template has no parameter, pseudo parameter or resource of that name (nor does SAM generate one)", k)
			}
			r.user[k] = v
		}
	}
	return r, nil
}

// missingParam stands for a parameter without a default nor a given value:
// an error when used.
type missingParam string

// scalarText is the text of a string, number or boolean.
func scalarText(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case value.Number:
		return string(v), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

// resourceExists evaluates a resource's Condition.
func (r *resolver) resourceExists(id string) (bool, error) {
	rv, _ := r.resources.Get(id)
	o, _ := rv.(*value.Object)
	c, ok := o.Get("Condition")
	if !ok {
		return true, nil
	}
	name, isStr := c.(string)
	if !isStr {
		return false, fmt.Errorf("/Resources/%s/Condition: want a condition name", id)
	}
	return r.condition(name, "/Resources/"+id+"/Condition")
}

func (r *resolver) condition(name, at string) (bool, error) {
	if b, ok := r.condMemo[name]; ok {
		return b, nil
	}
	cv, ok := r.conditions.Get(name)
	if !ok {
		return false, fmt.Errorf("%s: no condition %q in Conditions", at, name)
	}
	key := "condition " + name
	if r.visiting[key] {
		return false, fmt.Errorf("%s: condition %s %w", at, name, errCycle)
	}
	r.visiting[key] = true
	defer delete(r.visiting, key)
	v, err := r.resolve(cv, "/Conditions/"+name)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("/Conditions/%s: want a condition function (Fn::Equals, Fn::And …), got %s", name, value.KindOf(v))
	}
	r.condMemo[name] = b
	return b, nil
}

// resolve evaluates the intrinsic functions in v; at is v's JSON pointer.
// AWS::NoValue members and items are dropped; a whole value of
// AWS::NoValue comes back as noValue.
func (r *resolver) resolve(v any, at string) (any, error) {
	switch v := v.(type) {
	case []any:
		out := make([]any, 0, len(v))
		for i, e := range v {
			e, err := r.resolve(e, fmt.Sprintf("%s/%d", at, i))
			if err != nil {
				return nil, err
			}
			if e != noValue {
				out = append(out, e)
			}
		}
		return out, nil
	case *value.Object:
		if v.Len() == 1 {
			k, arg := v.At(0)
			if k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::") {
				return r.function(k, arg, at+"/"+k)
			}
		}
		o := value.NewObject(v.Len())
		for i := 0; i < v.Len(); i++ {
			k, e := v.At(i)
			e, err := r.resolve(e, at+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"))
			if err != nil {
				return nil, err
			}
			if e != noValue {
				o.Set(k, e)
			}
		}
		return o, nil
	}
	return v, nil
}

func (r *resolver) resolveString(v any, at, what string) (string, error) {
	v, err := r.resolve(v, at)
	if err != nil {
		return "", err
	}
	s, ok := scalarText(v)
	if !ok {
		return "", fmt.Errorf("%s: %s must be a string, got %s", at, what, value.KindOf(v))
	}
	return s, nil
}

func (r *resolver) resolveList(v any, at, what string) ([]any, error) {
	v, err := r.resolve(v, at)
	if err != nil {
		return nil, err
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: %s must be a list, got %s", at, what, value.KindOf(v))
	}
	return l, nil
}

func args(arg any, n int, at, form string) ([]any, error) {
	l, ok := arg.([]any)
	if !ok || len(l) != n {
		return nil, fmt.Errorf("%s: want %s", at, form)
	}
	return l, nil
}

func (r *resolver) function(name string, arg any, at string) (any, error) {
	switch name {
	case "Ref":
		id, ok := arg.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want a parameter or logical id", at)
		}
		return r.ref(id, at)
	case "Condition":
		c, ok := arg.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want a condition name", at)
		}
		return r.condition(c, at)
	case "Fn::GetAtt":
		var id, attr string
		switch a := arg.(type) {
		case string:
			var ok bool
			if id, attr, ok = strings.Cut(a, "."); !ok {
				return nil, fmt.Errorf("%s: want LogicalId.Attribute, got %q", at, a)
			}
		case []any:
			if len(a) != 2 {
				return nil, fmt.Errorf("%s: want [LogicalId, Attribute]", at)
			}
			var ok bool
			if id, ok = a[0].(string); !ok {
				return nil, fmt.Errorf("%s: want [LogicalId, Attribute]", at)
			}
			s, err := r.resolveString(a[1], at+"/1", "the attribute")
			if err != nil {
				return nil, err
			}
			attr = s
		default:
			return nil, fmt.Errorf("%s: want [LogicalId, Attribute]", at)
		}
		return r.getAtt(id, attr, at)
	case "Fn::Sub":
		return r.sub(arg, at)
	case "Fn::Join":
		l, err := args(arg, 2, at, "[delimiter, [values]]")
		if err != nil {
			return nil, err
		}
		delim, ok := l[0].(string)
		if !ok {
			return nil, fmt.Errorf("%s/0: the delimiter must be a string", at)
		}
		items, err := r.resolveList(l[1], at+"/1", "the list of values")
		if err != nil {
			return nil, err
		}
		parts := make([]string, len(items))
		for i, e := range items {
			s, ok := scalarText(e)
			if !ok {
				return nil, fmt.Errorf("%s/1/%d: a value to join must be a string, got %s", at, i, value.KindOf(e))
			}
			parts[i] = s
		}
		return strings.Join(parts, delim), nil
	case "Fn::Select":
		l, err := args(arg, 2, at, "[index, [values]]")
		if err != nil {
			return nil, err
		}
		is, err := r.resolveString(l[0], at+"/0", "the index")
		if err != nil {
			return nil, err
		}
		items, err := r.resolveList(l[1], at+"/1", "the list")
		if err != nil {
			return nil, err
		}
		i, err := strconv.Atoi(is)
		if err != nil || i < 0 || i >= len(items) {
			return nil, fmt.Errorf("%s: index %s is not within the list's %d values", at, is, len(items))
		}
		return items[i], nil
	case "Fn::Split":
		l, err := args(arg, 2, at, "[delimiter, string]")
		if err != nil {
			return nil, err
		}
		delim, ok := l[0].(string)
		if !ok || delim == "" {
			return nil, fmt.Errorf("%s/0: the delimiter must be a non-empty string", at)
		}
		s, err := r.resolveString(l[1], at+"/1", "the string to split")
		if err != nil {
			return nil, err
		}
		var out []any
		for _, p := range strings.Split(s, delim) {
			out = append(out, p)
		}
		return out, nil
	case "Fn::If":
		l, err := args(arg, 3, at, "[condition, value if true, value if false]")
		if err != nil {
			return nil, err
		}
		c, ok := l[0].(string)
		if !ok {
			return nil, fmt.Errorf("%s/0: want a condition name", at)
		}
		b, err := r.condition(c, at+"/0")
		if err != nil {
			return nil, err
		}
		if b {
			return r.resolve(l[1], at+"/1")
		}
		return r.resolve(l[2], at+"/2")
	case "Fn::Equals":
		l, err := args(arg, 2, at, "[value, value]")
		if err != nil {
			return nil, err
		}
		a, err := r.resolve(l[0], at+"/0")
		if err != nil {
			return nil, err
		}
		b, err := r.resolve(l[1], at+"/1")
		if err != nil {
			return nil, err
		}
		as, aok := scalarText(a)
		bs, bok := scalarText(b)
		if aok && bok {
			return as == bs, nil
		}
		return value.Equal(a, b), nil
	case "Fn::And", "Fn::Or":
		l, ok := arg.([]any)
		if !ok || len(l) < 2 || len(l) > 10 {
			return nil, fmt.Errorf("%s: want a list of 2 to 10 conditions", at)
		}
		and := name == "Fn::And"
		for i, e := range l {
			v, err := r.resolve(e, fmt.Sprintf("%s/%d", at, i))
			if err != nil {
				return nil, err
			}
			if s, isStr := e.(string); isStr {
				if v, err = r.condition(s, fmt.Sprintf("%s/%d", at, i)); err != nil {
					return nil, err
				}
			}
			b, isBool := v.(bool)
			if !isBool {
				return nil, fmt.Errorf("%s/%d: want a condition", at, i)
			}
			if b != and {
				return b, nil
			}
		}
		return and, nil
	case "Fn::Not":
		l, err := args(arg, 1, at, "[condition]")
		if err != nil {
			return nil, err
		}
		v, err := r.resolve(l[0], at+"/0")
		if err != nil {
			return nil, err
		}
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%s/0: want a condition", at)
		}
		return !b, nil
	case "Fn::FindInMap":
		l, ok := arg.([]any)
		if !ok || len(l) != 3 {
			return nil, fmt.Errorf("%s: want [MapName, TopLevelKey, SecondLevelKey]", at)
		}
		var keys [3]string
		for i := range keys {
			s, err := r.resolveString(l[i], fmt.Sprintf("%s/%d", at, i), "a key")
			if err != nil {
				return nil, err
			}
			keys[i] = s
		}
		m, _ := r.mappings.Get(keys[0])
		mo, _ := m.(*value.Object)
		top, _ := mo.Get(keys[1])
		to, _ := top.(*value.Object)
		v, ok := to.Get(keys[2])
		if !ok {
			return nil, fmt.Errorf("%s: Mappings has no %s/%s/%s", at, keys[0], keys[1], keys[2])
		}
		return v, nil
	case "Fn::GetAZs":
		region, err := r.resolveString(arg, at, "the region")
		if err != nil {
			return nil, err
		}
		if region == "" {
			region = r.scope.Region
		}
		return []any{region + "a", region + "b", region + "c"}, nil
	case "Fn::Base64":
		s, err := r.resolveString(arg, at, "the value")
		if err != nil {
			return nil, err
		}
		return base64.StdEncoding.EncodeToString([]byte(s)), nil
	case "Fn::ToJsonString":
		v, err := r.resolve(arg, at)
		if err != nil {
			return nil, err
		}
		return value.String(v), nil
	case "Fn::Length":
		l, err := r.resolveList(arg, at, "the value")
		if err != nil {
			return nil, err
		}
		return value.Int(int64(len(l))), nil
	case "Fn::ImportValue":
		return nil, fmt.Errorf("%s: stepd deploys no other stacks to import from; write the value in place of Fn::ImportValue, or pass it as a parameter", at)
	}
	return nil, fmt.Errorf("%s: stepd does not evaluate %s", at, name)
}

// sub evaluates Fn::Sub: "${Name}", "${LogicalId.Attribute}" and the
// literal "${!Text}".
func (r *resolver) sub(arg any, at string) (any, error) {
	var text string
	vars := map[string]any{}
	switch a := arg.(type) {
	case string:
		text = a
	case []any:
		if len(a) != 2 {
			return nil, fmt.Errorf("%s: want a string or [string, {variables}]", at)
		}
		s, ok := a[0].(string)
		if !ok {
			return nil, fmt.Errorf("%s/0: want a string", at)
		}
		text = s
		m, ok := a[1].(*value.Object)
		if !ok {
			return nil, fmt.Errorf("%s/1: want a mapping of variables", at)
		}
		for i := 0; i < m.Len(); i++ {
			k, e := m.At(i)
			v, err := r.resolve(e, at+"/1/"+k)
			if err != nil {
				return nil, err
			}
			vars[k] = v
		}
	default:
		return nil, fmt.Errorf("%s: want a string or [string, {variables}]", at)
	}
	var b strings.Builder
	for {
		i := strings.Index(text, "${")
		if i < 0 {
			b.WriteString(text)
			return b.String(), nil
		}
		j := strings.IndexByte(text[i:], '}')
		if j < 0 {
			b.WriteString(text)
			return b.String(), nil
		}
		b.WriteString(text[:i])
		name := text[i+2 : i+j]
		text = text[i+j+1:]
		if strings.HasPrefix(name, "!") {
			b.WriteString("${" + name[1:] + "}")
			continue
		}
		name = strings.TrimSpace(name)
		var v any
		var err error
		if vv, ok := vars[name]; ok {
			v = vv
		} else if id, attr, ok := strings.Cut(name, "."); ok && !r.isParam(name) {
			v, err = r.getAtt(id, attr, at)
		} else {
			v, err = r.ref(name, at)
		}
		if err != nil {
			return nil, err
		}
		s, ok := scalarText(v)
		if !ok {
			return nil, fmt.Errorf("%s: ${%s} is a %s, not a string", at, name, value.KindOf(v))
		}
		b.WriteString(s)
	}
}

func (r *resolver) isParam(name string) bool {
	_, ok := r.params[name]
	return ok
}

// ref is Ref name: a parameter's value, or a resource's.
func (r *resolver) ref(name, at string) (any, error) {
	if v, ok := r.params[name]; ok {
		if m, missing := v.(missingParam); missing {
			return nil, fmt.Errorf("%s: parameter %s has no Default: give it with --parameter %s=VALUE", at, string(m), string(m))
		}
		return v, nil
	}
	if v, ok := r.user[name]; ok {
		return v, nil
	}
	return r.resourceValue(name, "", at)
}

func (r *resolver) getAtt(id, attr, at string) (any, error) {
	if v, ok := r.user[id+"."+attr]; ok {
		return v, nil
	}
	return r.resourceValue(id, attr, at)
}

// kind describes what CloudFormation gives for a resource type: the
// property naming it, its Ref, and its attributes, from the name.
type kind struct {
	nameProp string
	ref      func(r *resolver, name string) string
	atts     map[string]func(r *resolver, name string) string
	// nameless: the name when the template gives none and it is
	// deterministic in stepd (a state machine's: stepd names it).
	nameless func(id string) string
	// gen: how CloudFormation generates the name when the template gives
	// none (max 0: it cannot, the name is required).
	gen naming
}

// namings are how CloudFormation names the resources it may name.
var namings = map[string]naming{
	"AWS::Lambda::Function":        {max: 64},
	"AWS::Serverless::Function":    {max: 64},
	"AWS::SQS::Queue":              {max: 80, fifo: "FifoQueue"},
	"AWS::SNS::Topic":              {max: 256, fifo: "FifoTopic"},
	"AWS::DynamoDB::Table":         {max: 255},
	"AWS::Serverless::SimpleTable": {max: 255},
	"AWS::S3::Bucket":              {max: 63, lower: true},
	"AWS::Logs::LogGroup":          {max: 512},
	"AWS::ECS::Cluster":            {max: 255},
	"AWS::ECS::TaskDefinition":     {max: 255},
	"AWS::Batch::JobQueue":         {max: 128},
	"AWS::Batch::JobDefinition":    {max: 128},
	"AWS::CodeBuild::Project":      {max: 255},
	"AWS::Glue::Job":               {max: 255},
	"AWS::SecretsManager::Secret":  {max: 512},
	"AWS::IAM::Role":               {max: 64},
}

// apiKind is an API Gateway API (REST or HTTP, SAM's or
// CloudFormation's): its Ref is the id API Gateway gives it.
var apiKind = kind{ref: func(r *resolver, id string) string { return r.apiID(id) }, nameless: sameID,
	atts: map[string]func(*resolver, string) string{"RestApiId": func(r *resolver, id string) string { return r.apiID(id) },
		"ApiId": func(r *resolver, id string) string { return r.apiID(id) },
		"ApiEndpoint": func(r *resolver, id string) string {
			return "https://" + r.apiID(id) + ".execute-api." + r.scope.Region + ".amazonaws.com"
		}}}

func self(_ *resolver, name string) string { return name }

func lambdaARN(r *resolver, name string) string {
	return r.scope.Service("lambda", "function:"+name, false, false)
}

func stateMachineARN(r *resolver, name string) string { return r.scope.StateMachine(name) }

func roleARN(r *resolver, name string) string { return r.scope.Role(name) }

func sameID(id string) string { return id }

var kinds = map[string]kind{
	"AWS::Lambda::Function":     {nameProp: "FunctionName", ref: self, atts: map[string]func(*resolver, string) string{"Arn": lambdaARN}},
	"AWS::Serverless::Function": {nameProp: "FunctionName", ref: self, atts: map[string]func(*resolver, string) string{"Arn": lambdaARN}},
	CFNStateMachine: {nameProp: "StateMachineName", ref: stateMachineARN, nameless: sameID,
		atts: map[string]func(*resolver, string) string{"Arn": stateMachineARN, "Name": self}},
	SAMStateMachine: {nameProp: "Name", ref: stateMachineARN, nameless: sameID,
		atts: map[string]func(*resolver, string) string{"Arn": stateMachineARN, "Name": self}},
	"AWS::StepFunctions::Activity": {nameProp: "Name", ref: func(r *resolver, n string) string { return r.scope.Activity(n) },
		atts: map[string]func(*resolver, string) string{"Arn": func(r *resolver, n string) string { return r.scope.Activity(n) }, "Name": self}},
	"AWS::SQS::Queue": {nameProp: "QueueName", ref: sqsURL, atts: map[string]func(*resolver, string) string{
		"Arn":       func(r *resolver, n string) string { return r.scope.Service("sqs", n, false, false) },
		"QueueName": self, "QueueUrl": sqsURL}},
	"AWS::SNS::Topic": {nameProp: "TopicName", ref: snsARN, atts: map[string]func(*resolver, string) string{"TopicArn": snsARN, "TopicName": self}},
	"AWS::DynamoDB::Table": {nameProp: "TableName", ref: self, atts: map[string]func(*resolver, string) string{
		"Arn": func(r *resolver, n string) string { return r.scope.Service("dynamodb", "table/"+n, false, false) }}},
	"AWS::Serverless::SimpleTable": {nameProp: "TableName", ref: self, atts: map[string]func(*resolver, string) string{
		"Arn": func(r *resolver, n string) string { return r.scope.Service("dynamodb", "table/"+n, false, false) }}},
	"AWS::S3::Bucket": {nameProp: "BucketName", ref: self, atts: map[string]func(*resolver, string) string{
		"Arn":                func(r *resolver, n string) string { return r.scope.Service("s3", n, true, true) },
		"DomainName":         func(_ *resolver, n string) string { return n + ".s3.amazonaws.com" },
		"RegionalDomainName": func(r *resolver, n string) string { return n + ".s3." + r.scope.Region + ".amazonaws.com" }}},
	"AWS::Events::EventBus": {nameProp: "Name", ref: self, atts: map[string]func(*resolver, string) string{
		"Arn":  func(r *resolver, n string) string { return r.scope.Service("events", "event-bus/"+n, false, false) },
		"Name": self}},
	"AWS::Logs::LogGroup": {nameProp: "LogGroupName", ref: self, atts: map[string]func(*resolver, string) string{
		"Arn": func(r *resolver, n string) string { return r.scope.Service("logs", "log-group:"+n+":*", false, false) }}},
	"AWS::ECS::Cluster": {nameProp: "ClusterName", ref: self, atts: map[string]func(*resolver, string) string{
		"Arn": func(r *resolver, n string) string { return r.scope.Service("ecs", "cluster/"+n, false, false) }}},
	// stepd never uses roles: one without RoleName has the name
	// CloudFormation would generate.
	"AWS::IAM::Role":           {nameProp: "RoleName", ref: self, atts: map[string]func(*resolver, string) string{"Arn": roleARN}},
	"AWS::ECS::TaskDefinition": {nameProp: "Family", ref: taskDefARN, atts: map[string]func(*resolver, string) string{"TaskDefinitionArn": taskDefARN}},
	"AWS::Batch::JobQueue": {nameProp: "JobQueueName", ref: jobQueueARN, atts: map[string]func(*resolver, string) string{
		"JobQueueArn": jobQueueARN, "JobQueueName": self}},
	"AWS::Batch::JobDefinition": {nameProp: "JobDefinitionName", ref: jobDefARN, atts: map[string]func(*resolver, string) string{
		"JobDefinitionArn": jobDefARN, "JobDefinitionName": self}},
	"AWS::CodeBuild::Project": {nameProp: "Name", ref: self, atts: map[string]func(*resolver, string) string{
		"Arn": func(r *resolver, n string) string { return r.scope.Service("codebuild", "project/"+n, false, false) }}},
	"AWS::Glue::Job": {nameProp: "Name", ref: self},
	// A secret's ARN ends in six characters Secrets Manager adds.
	"AWS::SecretsManager::Secret": {nameProp: "Name", ref: secretARN, atts: map[string]func(*resolver, string) string{"Id": secretARN}},
	// Network resources: their ids (stepd reaches no VPC).
	"AWS::EC2::VPC":            ec2Kind("vpc-", "VpcId"),
	"AWS::EC2::Subnet":         ec2Kind("subnet-", "SubnetId"),
	"AWS::EC2::SecurityGroup":  ec2Kind("sg-", "GroupId"),
	"AWS::Serverless::Api":     apiKind,
	"AWS::Serverless::HttpApi": apiKind,
	"AWS::ApiGateway::RestApi": apiKind,
	"AWS::ApiGatewayV2::Api":   apiKind,
}

func init() {
	for typ, n := range namings {
		k := kinds[typ]
		k.gen = n
		kinds[typ] = k
	}
}

func taskDefARN(r *resolver, family string) string {
	return r.scope.Service("ecs", "task-definition/"+family+":1", false, false)
}

func jobQueueARN(r *resolver, name string) string {
	return r.scope.Service("batch", "job-queue/"+name, false, false)
}

func jobDefARN(r *resolver, name string) string {
	return r.scope.Service("batch", "job-definition/"+name+":1", false, false)
}

func secretARN(r *resolver, name string) string {
	return r.scope.Service("secretsmanager", "secret:"+name+"-"+suffix(6, mixedDigits, "secret", r.opts.StackName, name), false, false)
}

// ec2Kind is an EC2 network resource whose Ref (and attribute attr) is its
// id: prefix and 17 hexadecimal digits.
func ec2Kind(prefix, attr string) kind {
	id := func(r *resolver, logicalID string) string {
		return prefix + digest("ec2", r.opts.StackName, logicalID)[:17]
	}
	return kind{ref: id, nameless: sameID, atts: map[string]func(*resolver, string) string{attr: id}}
}

func sqsURL(r *resolver, name string) string {
	return "https://sqs." + r.scope.Region + ".amazonaws.com/" + r.scope.Account + "/" + name
}

func snsARN(r *resolver, name string) string { return r.scope.Service("sns", name, false, false) }

// resourceValue is a resource's Ref (attr "") or attribute.
func (r *resolver) resourceValue(id, attr, at string) (any, error) {
	what := "Ref " + id
	if attr != "" {
		what = "Fn::GetAtt " + id + "." + attr
	}
	hint := fmt.Sprintf("give the value with --parameter %s=VALUE", id)
	if attr != "" {
		hint = fmt.Sprintf("give the value with --parameter %s.%s=VALUE", id, attr)
	}
	rv, ok := r.resources.Get(id)
	if !ok {
		if im, generated := r.samImplicit(id); generated {
			return r.implicitValue(id, attr, im, at, what, hint)
		}
		return nil, fmt.Errorf("%s: %s: the template has no parameter or resource %s", at, what, id)
	}
	res, _ := rv.(*value.Object)
	typ := str(res, "Type")
	k, known := kinds[typ]
	if !known {
		return nil, fmt.Errorf("%s: %s: stepd cannot tell what CloudFormation gives for a %s; %s", at, what, typ, hint)
	}
	if on, err := r.resourceExists(id); err != nil {
		return nil, err
	} else if !on {
		return nil, fmt.Errorf("%s: %s: the resource's Condition is false, so it does not exist", at, what)
	}
	f := k.ref
	if attr != "" {
		if f = k.atts[attr]; f == nil {
			var names []string
			for n := range k.atts {
				names = append(names, n)
			}
			slices.Sort(names)
			return nil, fmt.Errorf("%s: %s: stepd gives a %s's %s only; %s", at, what, typ, strings.Join(names, ", "), hint)
		}
	}
	key := "resource " + id
	if r.visiting[key] {
		return nil, fmt.Errorf("%s: %s: the resource's name %w", at, what, errCycle)
	}
	r.visiting[key] = true
	defer delete(r.visiting, key)
	props, _ := res.Get("Properties")
	po, _ := props.(*value.Object)
	nv, has := po.Get(k.nameProp)
	name := ""
	if has {
		s, err := r.resolveString(nv, "/Resources/"+id+"/Properties/"+k.nameProp, k.nameProp)
		if err != nil {
			return nil, err
		}
		name = s
	} else if k.gen.max > 0 {
		name = r.generatedName(id, k.gen, po)
	} else if k.nameless != nil {
		name = k.nameless(id)
	} else {
		return nil, fmt.Errorf("%s: %s: the %s has no %s, so CloudFormation would generate its name; give %s, or %s", at, what, typ, k.nameProp, k.nameProp, hint)
	}
	if typ == "AWS::IAM::Role" && attr == "Arn" {
		if path := str(po, "Path"); path != "" {
			return "arn:aws:iam::" + r.scope.Account + ":role" + path + name, nil
		}
	}
	return f(r, name), nil
}
