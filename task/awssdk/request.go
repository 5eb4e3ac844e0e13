package awssdk

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/task/awsmodel"
	"github.com/stepd/stepd/value"
)

// paramError is a parameter that does not fit the operation's input shape.
type paramError struct{ path, problem string }

func (e *paramError) Error() string {
	if e.path == "" {
		return "the parameters " + e.problem
	}
	return fmt.Sprintf("the parameter %s %s", e.path, e.problem)
}

// stepName is a member's name as Step Functions takes and returns it: the
// model's name with its first letter in upper case, and EqualsValue for
// Equals.
func stepName(model string) string {
	c, n := utf8.DecodeRuneInString(model)
	s := string(unicode.ToUpper(c)) + model[n:]
	if s == "Equals" {
		return "EqualsValue"
	}
	return s
}

// members matches the keys of a parameters object with the members of a
// structure shape, in the object's order; an unknown key is an error.
func members(api *awsmodel.API, sh *awsmodel.APIShape, obj *value.Object, path string) ([]memberValue, error) {
	out := make([]memberValue, 0, obj.Len())
	for k, v := range obj.All {
		i := slices.IndexFunc(sh.Members, func(m awsmodel.APIMember) bool { return stepName(m.Name) == k })
		if i < 0 {
			return nil, &paramError{join(path, k), "is not a member of the API's input"}
		}
		out = append(out, memberValue{m: &sh.Members[i], v: v})
	}
	return out, nil
}

type memberValue struct {
	m *awsmodel.APIMember
	v any
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// request is an HTTP request before it is addressed and signed.
type request struct {
	method string
	path   string // with the URI's labels filled in, escaped
	query  url.Values
	header http.Header
	body   []byte
	bucket string // S3's Bucket, for virtual-hosted addressing
	// hostPrefix goes before the host of AWS's own endpoint.
	hostPrefix string
}

// buildRequest serializes the parameters for the operation by the
// service's protocol.
func buildRequest(api *awsmodel.API, op *awsmodel.Op, params any) (*request, error) {
	req := &request{method: http.MethodPost, path: "/", query: url.Values{}, header: http.Header{}}
	var obj *value.Object
	switch p := params.(type) {
	case nil:
		obj = value.NewObject(0)
	case *value.Object:
		obj = p
	default:
		return nil, &paramError{"", "must be an object"}
	}
	var in *awsmodel.APIShape
	if op.Input >= 0 {
		in = &api.Shapes[op.Input]
	} else if obj.Len() > 0 {
		return nil, &paramError{"", "must be empty: the action takes none"}
	}
	switch api.Protocol {
	case awsmodel.ProtocolJSON:
		req.header.Set("Content-Type", "application/x-amz-json-"+orDefault(api.JSONVersion, "1.0"))
		req.header.Set("X-Amz-Target", api.TargetPrefix+"."+op.Name)
		body := []byte("{}")
		if in != nil {
			var err error
			if body, err = jsonStruct(api, in, obj, "", nil); err != nil {
				return nil, err
			}
		}
		req.body = body
	case awsmodel.ProtocolQuery, awsmodel.ProtocolEC2:
		req.header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		form := url.Values{"Action": {op.Name}, "Version": {api.APIVersion}}
		if in != nil {
			if err := queryStruct(api, in, obj, "", "", form); err != nil {
				return nil, err
			}
		}
		req.body = []byte(form.Encode())
	case awsmodel.ProtocolRESTJSON, awsmodel.ProtocolRESTXML:
		if err := restRequest(api, op, in, obj, req); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("protocol %q is not supported", api.Protocol)
	}
	if op.HostPrefix != "" {
		prefix, err := hostPrefix(api, op.HostPrefix, in, obj)
		if err != nil {
			return nil, err
		}
		req.hostPrefix = prefix
	}
	return req, nil
}

// hostPrefix fills an operation's host prefix with its host labels.
func hostPrefix(api *awsmodel.API, prefix string, in *awsmodel.APIShape, obj *value.Object) (string, error) {
	if in != nil {
		for _, m := range in.Members {
			if !m.HostLabel {
				continue
			}
			v, _ := obj.Get(stepName(m.Name))
			s, ok := v.(string)
			if !ok || s == "" {
				return "", &paramError{stepName(m.Name), "is required"}
			}
			for _, c := range s {
				if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
					return "", &paramError{stepName(m.Name), "must be a host name label"}
				}
			}
			prefix = strings.ReplaceAll(prefix, "{"+m.Name+"}", s)
		}
	}
	if strings.Contains(prefix, "{") {
		return "", fmt.Errorf("host prefix %q: a label has no value", prefix)
	}
	return prefix, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// fillTokens adds idempotency tokens the parameters leave out, as the AWS
// SDKs do.
func fillTokens(sh *awsmodel.APIShape, obj *value.Object) *value.Object {
	for _, m := range sh.Members {
		if m.IdempotencyToken && !obj.Has(stepName(m.Name)) {
			obj = obj.With(stepName(m.Name), uuid.New())
		}
	}
	return obj
}

// --- JSON ---

func jsonStruct(api *awsmodel.API, sh *awsmodel.APIShape, obj *value.Object, path string, skip func(*awsmodel.APIMember) bool) ([]byte, error) {
	obj = fillTokens(sh, obj)
	mv, err := members(api, sh, obj, path)
	if err != nil {
		return nil, err
	}
	buf := []byte{'{'}
	first := true
	for _, x := range mv {
		if skip != nil && skip(x.m) {
			continue
		}
		if x.v == nil {
			continue // null leaves the member out
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = value.AppendString(buf, orDefault(x.m.LocationName, x.m.Name))
		buf = append(buf, ':')
		if buf, err = jsonValue(api, buf, x.m.Shape, x.v, join(path, stepName(x.m.Name)), x.m.TimestampFormat); err != nil {
			return nil, err
		}
	}
	return append(buf, '}'), nil
}

func jsonValue(api *awsmodel.API, buf []byte, si int, v any, path, tsFormat string) ([]byte, error) {
	sh := &api.Shapes[si]
	switch sh.Type {
	case awsmodel.TDocument:
		return value.Append(buf, v), nil
	case awsmodel.TStructure:
		obj, ok := v.(*value.Object)
		if !ok {
			return nil, &paramError{path, "must be an object"}
		}
		b, err := jsonStruct(api, sh, obj, path, nil)
		return append(buf, b...), err
	case awsmodel.TList:
		arr, ok := v.([]any)
		if !ok {
			return nil, &paramError{path, "must be an array"}
		}
		buf = append(buf, '[')
		for i, e := range arr {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = jsonValue(api, buf, sh.Elem, e, fmt.Sprintf("%s[%d]", path, i), ""); err != nil {
				return nil, err
			}
		}
		return append(buf, ']'), nil
	case awsmodel.TMap:
		obj, ok := v.(*value.Object)
		if !ok {
			return nil, &paramError{path, "must be an object"}
		}
		buf = append(buf, '{')
		i := 0
		for k, e := range obj.All {
			if i > 0 {
				buf = append(buf, ',')
			}
			i++
			buf = value.AppendString(buf, k)
			buf = append(buf, ':')
			var err error
			if buf, err = jsonValue(api, buf, sh.Elem, e, join(path, k), ""); err != nil {
				return nil, err
			}
		}
		return append(buf, '}'), nil
	case awsmodel.TTimestamp:
		t, err := timestamp(v, path)
		if err != nil {
			return nil, err
		}
		switch orDefault(tsFormat, sh.TimestampFormat) {
		case "iso8601":
			return value.AppendString(buf, t.UTC().Format(time.RFC3339Nano)), nil
		case "rfc822":
			return value.AppendString(buf, t.UTC().Format(http.TimeFormat)), nil
		}
		return append(buf, epoch(t)...), nil
	case awsmodel.TBlob:
		b, err := blob(v, path)
		if err != nil {
			return nil, err
		}
		return value.AppendString(buf, base64.StdEncoding.EncodeToString(b)), nil
	}
	s, err := scalar(sh, v, path)
	if err != nil {
		return nil, err
	}
	if sh.Type == awsmodel.TString {
		return value.AppendString(buf, s), nil
	}
	return append(buf, s...), nil
}

// scalar checks a string, number or boolean and returns its text.
func scalar(sh *awsmodel.APIShape, v any, path string) (string, error) {
	switch sh.Type {
	case awsmodel.TString:
		switch s := v.(type) {
		case string:
			return s, nil
		case *value.Object, []any:
			// A JSON object or array given for a string member is sent as
			// its JSON text, as Step Functions does (an object Input of
			// aws-sdk:sfn:startExecution starts the execution with it).
			return value.String(s), nil
		}
		return "", &paramError{path, "must be a string"}
	case awsmodel.TInteger:
		if n, ok := v.(value.Number); ok && n.IsInteger() {
			if i, ok := n.Int64(); ok {
				return strconv.FormatInt(i, 10), nil
			}
		}
		return "", &paramError{path, "must be an integer"}
	case awsmodel.TFloat:
		if n, ok := v.(value.Number); ok {
			return string(n), nil
		}
		return "", &paramError{path, "must be a number"}
	case awsmodel.TBoolean:
		if b, ok := v.(bool); ok {
			return strconv.FormatBool(b), nil
		}
		return "", &paramError{path, "must be a boolean"}
	case awsmodel.TTimestamp:
		t, err := timestamp(v, path)
		if err != nil {
			return "", err
		}
		return t.UTC().Format("2006-01-02T15:04:05.000Z"), nil
	case awsmodel.TBlob:
		b, err := blob(v, path)
		return base64.StdEncoding.EncodeToString(b), err
	}
	return "", &paramError{path, "must be a single value"}
}

// timestamp reads an ISO 8601 text or a number of seconds since the epoch.
func timestamp(v any, path string) (time.Time, error) {
	switch t := v.(type) {
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02"} {
			if ts, err := time.Parse(layout, t); err == nil {
				return ts, nil
			}
		}
	case value.Number:
		f := t.Float64()
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)), nil
	}
	return time.Time{}, &paramError{path, "must be an ISO 8601 timestamp or a number of seconds since 1970"}
}

func epoch(t time.Time) string {
	if t.Nanosecond() == 0 {
		return strconv.FormatInt(t.Unix(), 10)
	}
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', -1, 64)
}

// blob is the bytes a blob parameter stands for: the value's JSON text, a
// string's with its quotes, as Step Functions sends them (the recorded
// ETags of S3 PutObject with a Body "text data", 0 and ["List","Data"] are
// the MD5 of "\"text data\"", "0" and "[\"List\",\"Data\"]").
func blob(v any, path string) ([]byte, error) {
	if v == nil {
		return nil, &paramError{path, "must not be null"}
	}
	return value.Append(nil, v), nil
}

// --- query and EC2 ---

func queryStruct(api *awsmodel.API, sh *awsmodel.APIShape, obj *value.Object, prefix, path string, form url.Values) error {
	obj = fillTokens(sh, obj)
	mv, err := members(api, sh, obj, path)
	if err != nil {
		return err
	}
	for _, x := range mv {
		if x.v == nil {
			continue
		}
		name := orDefault(x.m.LocationName, x.m.Name)
		if api.Protocol == awsmodel.ProtocolEC2 {
			name = orDefault(x.m.QueryName, stepName(orDefault(x.m.LocationName, x.m.Name)))
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		if err := queryValue(api, x.m.Shape, x.v, key, join(path, stepName(x.m.Name)), x.m.Flattened, form); err != nil {
			return err
		}
	}
	return nil
}

func queryValue(api *awsmodel.API, si int, v any, key, path string, flattened bool, form url.Values) error {
	sh := &api.Shapes[si]
	switch sh.Type {
	case awsmodel.TStructure:
		obj, ok := v.(*value.Object)
		if !ok {
			return &paramError{path, "must be an object"}
		}
		return queryStruct(api, sh, obj, key, path, form)
	case awsmodel.TList:
		arr, ok := v.([]any)
		if !ok {
			return &paramError{path, "must be an array"}
		}
		if len(arr) == 0 {
			if api.Protocol != awsmodel.ProtocolEC2 {
				form.Set(key, "")
			}
			return nil
		}
		for i, e := range arr {
			k := key
			switch {
			case api.Protocol == awsmodel.ProtocolEC2 || flattened || sh.Flattened:
				k = fmt.Sprintf("%s.%d", key, i+1)
			default:
				k = fmt.Sprintf("%s.%s.%d", key, orDefault(sh.ElemName, "member"), i+1)
			}
			if err := queryValue(api, sh.Elem, e, k, fmt.Sprintf("%s[%d]", path, i), false, form); err != nil {
				return err
			}
		}
		return nil
	case awsmodel.TMap:
		obj, ok := v.(*value.Object)
		if !ok {
			return &paramError{path, "must be an object"}
		}
		i := 0
		for k, e := range obj.All {
			i++
			entry := fmt.Sprintf("%s.entry.%d", key, i)
			if flattened || sh.Flattened {
				entry = fmt.Sprintf("%s.%d", key, i)
			}
			form.Set(entry+"."+orDefault(sh.KeyName, "key"), k)
			if err := queryValue(api, sh.Elem, e, entry+"."+orDefault(sh.ValueName, "value"), join(path, k), false, form); err != nil {
				return err
			}
		}
		return nil
	case awsmodel.TDocument:
		form.Set(key, value.String(v))
		return nil
	}
	s, err := scalar(sh, v, path)
	if err != nil {
		return err
	}
	form.Set(key, s)
	return nil
}

// --- REST ---

func restRequest(api *awsmodel.API, op *awsmodel.Op, in *awsmodel.APIShape, obj *value.Object, req *request) error {
	req.method = orDefault(op.Method, http.MethodPost)
	uri := orDefault(op.URI, "/")
	var mv []memberValue
	if in != nil {
		obj = fillTokens(in, obj)
		var err error
		if mv, err = members(api, in, obj, ""); err != nil {
			return err
		}
	}
	labels := map[string]string{}
	var payload *memberValue
	bodyMembers := false
	for i := range mv {
		x := &mv[i]
		if x.v == nil {
			continue
		}
		sh := &api.Shapes[x.m.Shape]
		name := orDefault(x.m.LocationName, x.m.Name)
		path := stepName(x.m.Name)
		switch x.m.Location {
		case "uri":
			s, err := scalar(sh, x.v, path)
			if err != nil {
				return err
			}
			labels[name] = s
			if name == "Bucket" && api.EndpointPrefix == "s3" {
				req.bucket = s
			}
		case "querystring":
			if err := restQuery(sh, api, x.v, name, path, req.query); err != nil {
				return err
			}
		case "header":
			s, err := headerValue(api, x.m, x.v, path)
			if err != nil {
				return err
			}
			req.header.Set(name, s)
		case "headers":
			m, ok := x.v.(*value.Object)
			if !ok {
				return &paramError{path, "must be an object"}
			}
			for k, e := range m.All {
				s, ok := e.(string)
				if !ok {
					return &paramError{join(path, k), "must be a string"}
				}
				req.header.Set(name+k, s)
			}
		case "statusCode":
		default:
			if in.Payload == x.m.Name {
				payload = x
			} else {
				bodyMembers = true
			}
		}
	}
	// Fill the URI template: {Name} escapes slashes, {Name+} keeps them.
	var b strings.Builder
	rest := uri
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return fmt.Errorf("malformed URI template %q", uri)
		}
		b.WriteString(rest[:i])
		label := rest[i+1 : i+j]
		greedy := strings.HasSuffix(label, "+")
		label = strings.TrimSuffix(label, "+")
		val, ok := labels[label]
		if !ok {
			return &paramError{stepName(label), "is required"}
		}
		if greedy {
			parts := strings.Split(val, "/")
			for k, p := range parts {
				parts[k] = escapePath(p)
			}
			b.WriteString(strings.Join(parts, "/"))
		} else {
			b.WriteString(escapePath(val))
		}
		rest = rest[i+j+1:]
	}
	full := b.String()
	if p, q, ok := strings.Cut(full, "?"); ok {
		full = p
		fixed, err := url.ParseQuery(q)
		if err != nil {
			return fmt.Errorf("malformed URI template %q: %w", uri, err)
		}
		for k, vs := range fixed {
			if len(vs) == 1 && vs[0] == "" && !strings.Contains(q, k+"=") {
				req.query[k] = []string{""}
				continue
			}
			req.query[k] = append(req.query[k], vs...)
		}
	}
	req.path = full
	switch {
	case payload != nil:
		sh := &api.Shapes[payload.m.Shape]
		switch sh.Type {
		case awsmodel.TBlob:
			body, err := blob(payload.v, stepName(payload.m.Name))
			if err != nil {
				return err
			}
			req.body = body
		case awsmodel.TString:
			s, ok := payload.v.(string)
			if !ok {
				s = value.String(payload.v)
			}
			req.body = []byte(s)
		case awsmodel.TStructure:
			obj, ok := payload.v.(*value.Object)
			if !ok {
				return &paramError{stepName(payload.m.Name), "must be an object"}
			}
			var err error
			if api.Protocol == awsmodel.ProtocolRESTXML {
				req.header.Set("Content-Type", "application/xml")
				req.body, err = xmlPayload(api, payload.m, sh, obj)
			} else {
				req.header.Set("Content-Type", "application/json")
				req.body, err = jsonStruct(api, sh, obj, stepName(payload.m.Name), nil)
			}
			if err != nil {
				return err
			}
		default:
			req.header.Set("Content-Type", "application/json")
			var err error
			if req.body, err = jsonValue(api, nil, payload.m.Shape, payload.v, stepName(payload.m.Name), ""); err != nil {
				return err
			}
		}
	case bodyMembers && api.Protocol == awsmodel.ProtocolRESTJSON:
		req.header.Set("Content-Type", "application/json")
		body, err := jsonStruct(api, in, obj, "", func(m *awsmodel.APIMember) bool { return m.Location != "" })
		if err != nil {
			return err
		}
		req.body = body
	case bodyMembers && api.Protocol == awsmodel.ProtocolRESTXML:
		// The body members inside the input's element (Route 53).
		var buf bytes.Buffer
		name := orDefault(op.XMLName, op.Name+"Request")
		buf.WriteString("<" + name)
		if ns := orDefault(op.XMLNamespace, api.XMLNamespace); ns != "" {
			buf.WriteString(` xmlns="` + ns + `"`)
		}
		buf.WriteString(">")
		body := value.NewObject(len(mv))
		for _, x := range mv {
			if x.m.Location == "" && x.v != nil {
				body.Set(stepName(x.m.Name), x.v)
			}
		}
		if err := xmlMembers(api, &buf, in, body, ""); err != nil {
			return err
		}
		buf.WriteString("</" + name + ">")
		req.header.Set("Content-Type", "application/xml")
		req.body = buf.Bytes()
	case api.Protocol == awsmodel.ProtocolRESTJSON && (req.method == http.MethodPost || req.method == http.MethodPut || req.method == http.MethodPatch) && in != nil && in.Payload == "":
		req.header.Set("Content-Type", "application/json")
		req.body = []byte("{}")
	}
	return nil
}

// escapePath escapes a URI label as the AWS SDKs do (RFC 3986 unreserved
// characters kept).
func escapePath(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func restQuery(sh *awsmodel.APIShape, api *awsmodel.API, v any, name, path string, q url.Values) error {
	switch sh.Type {
	case awsmodel.TList:
		arr, ok := v.([]any)
		if !ok {
			return &paramError{path, "must be an array"}
		}
		for i, e := range arr {
			s, err := scalar(&api.Shapes[sh.Elem], e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return err
			}
			q.Add(name, s)
		}
		return nil
	case awsmodel.TMap:
		obj, ok := v.(*value.Object)
		if !ok {
			return &paramError{path, "must be an object"}
		}
		for k, e := range obj.All {
			s, err := scalar(&api.Shapes[sh.Elem], e, join(path, k))
			if err != nil {
				return err
			}
			q.Set(k, s)
		}
		return nil
	}
	s, err := scalar(sh, v, path)
	if err != nil {
		return err
	}
	q.Set(name, s)
	return nil
}

func headerValue(api *awsmodel.API, m *awsmodel.APIMember, v any, path string) (string, error) {
	sh := &api.Shapes[m.Shape]
	if m.JSONValue {
		return base64.StdEncoding.EncodeToString(value.Append(nil, v)), nil
	}
	switch sh.Type {
	case awsmodel.TTimestamp:
		t, err := timestamp(v, path)
		if err != nil {
			return "", err
		}
		if orDefault(m.TimestampFormat, sh.TimestampFormat) == "iso8601" {
			return t.UTC().Format(time.RFC3339), nil
		}
		return t.UTC().Format(http.TimeFormat), nil
	case awsmodel.TList:
		arr, ok := v.([]any)
		if !ok {
			return "", &paramError{path, "must be an array"}
		}
		parts := make([]string, len(arr))
		for i, e := range arr {
			s, err := scalar(&api.Shapes[sh.Elem], e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	}
	return scalar(sh, v, path)
}

// xmlPayload writes a rest-xml payload structure.
func xmlPayload(api *awsmodel.API, m *awsmodel.APIMember, sh *awsmodel.APIShape, obj *value.Object) ([]byte, error) {
	var buf bytes.Buffer
	name := orDefault(m.LocationName, m.Name)
	buf.WriteString("<" + name)
	if ns := orDefault(m.XMLNamespace, api.XMLNamespace); ns != "" {
		buf.WriteString(` xmlns="` + ns + `"`)
	}
	buf.WriteString(">")
	if err := xmlMembers(api, &buf, sh, obj, stepName(m.Name)); err != nil {
		return nil, err
	}
	buf.WriteString("</" + name + ">")
	return buf.Bytes(), nil
}

func xmlMembers(api *awsmodel.API, buf *bytes.Buffer, sh *awsmodel.APIShape, obj *value.Object, path string) error {
	mv, err := members(api, sh, obj, path)
	if err != nil {
		return err
	}
	for _, x := range mv {
		if x.v == nil || x.m.XMLAttribute {
			continue
		}
		if err := xmlValue(api, buf, x.m.Shape, x.v, orDefault(x.m.LocationName, x.m.Name), join(path, stepName(x.m.Name)), x.m.Flattened); err != nil {
			return err
		}
	}
	return nil
}

func xmlValue(api *awsmodel.API, buf *bytes.Buffer, si int, v any, name, path string, flattened bool) error {
	sh := &api.Shapes[si]
	switch sh.Type {
	case awsmodel.TStructure:
		obj, ok := v.(*value.Object)
		if !ok {
			return &paramError{path, "must be an object"}
		}
		buf.WriteString("<" + name + ">")
		if err := xmlMembers(api, buf, sh, obj, path); err != nil {
			return err
		}
		buf.WriteString("</" + name + ">")
		return nil
	case awsmodel.TList:
		arr, ok := v.([]any)
		if !ok {
			return &paramError{path, "must be an array"}
		}
		if flattened || sh.Flattened {
			for i, e := range arr {
				if err := xmlValue(api, buf, sh.Elem, e, orDefault(sh.ElemName, name), fmt.Sprintf("%s[%d]", path, i), false); err != nil {
					return err
				}
			}
			return nil
		}
		buf.WriteString("<" + name + ">")
		for i, e := range arr {
			if err := xmlValue(api, buf, sh.Elem, e, orDefault(sh.ElemName, "member"), fmt.Sprintf("%s[%d]", path, i), false); err != nil {
				return err
			}
		}
		buf.WriteString("</" + name + ">")
		return nil
	case awsmodel.TMap:
		obj, ok := v.(*value.Object)
		if !ok {
			return &paramError{path, "must be an object"}
		}
		buf.WriteString("<" + name + ">")
		for k, e := range obj.All {
			buf.WriteString("<entry><" + orDefault(sh.KeyName, "key") + ">")
			_ = xml.EscapeText(buf, []byte(k))
			buf.WriteString("</" + orDefault(sh.KeyName, "key") + ">")
			if err := xmlValue(api, buf, sh.Elem, e, orDefault(sh.ValueName, "value"), join(path, k), false); err != nil {
				return err
			}
			buf.WriteString("</entry>")
		}
		buf.WriteString("</" + name + ">")
		return nil
	}
	s, err := scalar(sh, v, path)
	if err != nil {
		return err
	}
	buf.WriteString("<" + name + ">")
	_ = xml.EscapeText(buf, []byte(s))
	buf.WriteString("</" + name + ">")
	return nil
}
