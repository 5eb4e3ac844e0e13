package awssdk

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stepd/stepd/task/awsmodel"
	"github.com/stepd/stepd/value"
)

// response is an HTTP answer, read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// parseOutput turns a successful answer into the result Step Functions
// returns: the output shape's members under their Step Functions names.
func parseOutput(api *awsmodel.API, op *awsmodel.Op, resp *response) (any, error) {
	if op.Output < 0 {
		return value.NewObject(0), nil
	}
	sh := &api.Shapes[op.Output]
	switch api.Protocol {
	case awsmodel.ProtocolJSON:
		return jsonBody(api, op.Output, resp.body)
	case awsmodel.ProtocolQuery, awsmodel.ProtocolEC2:
		root, err := parseXML(resp.body)
		if err != nil {
			return nil, err
		}
		node := root
		if op.ResultWrapper != "" {
			if node = root.child(op.ResultWrapper); node == nil {
				return value.NewObject(0), nil
			}
		}
		return xmlStruct(api, sh, node), nil
	}
	// REST: members bound to headers and the status code, then the body.
	out := value.NewObject(len(sh.Members))
	var payload *awsmodel.APIMember
	bodyMembers := false
	for i := range sh.Members {
		m := &sh.Members[i]
		msh := &api.Shapes[m.Shape]
		name := orDefault(m.LocationName, m.Name)
		switch m.Location {
		case "header":
			h := resp.header.Values(name)
			if len(h) == 0 {
				continue
			}
			if v, ok := headerOutput(api, m, msh, strings.Join(h, ",")); ok {
				out.Set(stepName(m.Name), v)
			}
		case "headers":
			meta := value.NewObject(0)
			for k, vs := range resp.header {
				if len(k) >= len(name) && strings.EqualFold(k[:len(name)], name) {
					meta.Set(strings.ToLower(k[len(name):]), strings.Join(vs, ","))
				}
			}
			out.Set(stepName(m.Name), meta)
		case "statusCode":
			out.Set(stepName(m.Name), value.Int(int64(resp.status)))
		default:
			if sh.Payload == m.Name {
				payload = m
			} else {
				bodyMembers = true
			}
		}
	}
	switch {
	case payload != nil:
		psh := &api.Shapes[payload.Shape]
		switch psh.Type {
		case awsmodel.TBlob, awsmodel.TString:
			// A streamed body is returned as its text, as Step Functions
			// returns S3's GetObject Body.
			out.Set(stepName(payload.Name), string(resp.body))
		default:
			if len(bytes.TrimSpace(resp.body)) == 0 {
				break
			}
			var v any
			var err error
			if api.Protocol == awsmodel.ProtocolRESTXML {
				root, perr := parseXML(resp.body)
				if perr != nil {
					return nil, perr
				}
				v = xmlValue2(api, payload.Shape, root)
			} else {
				v, err = jsonBody(api, payload.Shape, resp.body)
				if err != nil {
					return nil, err
				}
			}
			out.Set(stepName(payload.Name), v)
		}
	case bodyMembers && len(bytes.TrimSpace(resp.body)) > 0:
		var body *value.Object
		if api.Protocol == awsmodel.ProtocolRESTXML {
			root, err := parseXML(resp.body)
			if err != nil {
				return nil, err
			}
			body, _ = xmlStruct(api, sh, root).(*value.Object)
		} else {
			v, err := jsonBody(api, op.Output, resp.body)
			if err != nil {
				return nil, err
			}
			body, _ = v.(*value.Object)
		}
		if body != nil {
			for k, v := range body.All {
				if !out.Has(k) {
					out.Set(k, v)
				}
			}
		}
	}
	// Members in Step Functions' order, with the payload (S3's Body) last.
	ordered := value.NewObject(out.Len())
	for _, m := range outputOrder(sh) {
		if m.Name == sh.Payload {
			continue
		}
		if v, ok := out.Get(stepName(m.Name)); ok {
			ordered.Set(stepName(m.Name), v)
		}
	}
	if v, ok := out.Get(stepName(sh.Payload)); ok && sh.Payload != "" {
		ordered.Set(stepName(sh.Payload), v)
	}
	return ordered, nil
}

// outputOrder is the order in which Step Functions returns a structure's
// members: by name (the recorded results list DynamoDB's Count, Items,
// ScannedCount and EventBridge's Entries, FailedEntryCount so, against
// the models' order).
func outputOrder(sh *awsmodel.APIShape) []*awsmodel.APIMember {
	ms := make([]*awsmodel.APIMember, len(sh.Members))
	for i := range sh.Members {
		ms[i] = &sh.Members[i]
	}
	slices.SortStableFunc(ms, func(a, b *awsmodel.APIMember) int { return strings.Compare(stepName(a.Name), stepName(b.Name)) })
	return ms
}

func headerOutput(api *awsmodel.API, m *awsmodel.APIMember, sh *awsmodel.APIShape, h string) (any, bool) {
	if m.JSONValue {
		if b, err := base64.StdEncoding.DecodeString(h); err == nil {
			if v, err := value.Parse(b); err == nil {
				return v, true
			}
		}
		return h, true
	}
	switch sh.Type {
	case awsmodel.TInteger, awsmodel.TFloat:
		if _, err := strconv.ParseFloat(h, 64); err == nil {
			return value.Number(h), true
		}
		return nil, false
	case awsmodel.TBoolean:
		return h == "true", true
	case awsmodel.TTimestamp:
		for _, layout := range []string{http.TimeFormat, time.RFC1123, time.RFC3339Nano} {
			if t, err := time.Parse(layout, h); err == nil {
				return formatTime(t), true
			}
		}
		return h, true
	case awsmodel.TList:
		parts := strings.Split(h, ",")
		arr := make([]any, len(parts))
		for i, p := range parts {
			arr[i] = strings.TrimSpace(p)
		}
		return arr, true
	}
	return h, true
}

// formatTime renders a timestamp as Step Functions does: ISO 8601 in UTC.
func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.999Z")
}

// jsonBody decodes a JSON answer with the shape's names and types.
func jsonBody(api *awsmodel.API, si int, body []byte) (any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return value.NewObject(0), nil
	}
	v, err := value.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("the service answered with malformed JSON: %w", err)
	}
	return jsonOut(api, si, v), nil
}

func jsonOut(api *awsmodel.API, si int, v any) any {
	sh := &api.Shapes[si]
	switch sh.Type {
	case awsmodel.TStructure:
		obj, ok := v.(*value.Object)
		if !ok {
			return v
		}
		out := value.NewObject(obj.Len())
		for _, m := range outputOrder(sh) {
			if m.Location != "" {
				continue
			}
			if e, ok := obj.Get(orDefault(m.LocationName, m.Name)); ok && e != nil {
				out.Set(stepName(m.Name), jsonOut(api, m.Shape, e))
			}
		}
		return out
	case awsmodel.TList:
		arr, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			out[i] = jsonOut(api, sh.Elem, e)
		}
		return out
	case awsmodel.TMap:
		obj, ok := v.(*value.Object)
		if !ok {
			return v
		}
		out := value.NewObject(obj.Len())
		for k, e := range obj.All {
			out.Set(k, jsonOut(api, sh.Elem, e))
		}
		return out
	case awsmodel.TTimestamp:
		switch t := v.(type) {
		case value.Number:
			f := t.Float64()
			sec := int64(f)
			return formatTime(time.Unix(sec, int64((f-float64(sec))*1e9)))
		case string:
			if ts, err := time.Parse(time.RFC3339Nano, t); err == nil {
				return formatTime(ts)
			}
		}
	}
	return v
}

// --- XML ---

// node is an XML element: its name, attributes, text and children.
type node struct {
	name     string
	attrs    map[string]string
	text     string
	children []*node
}

func (n *node) child(name string) *node {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

func (n *node) all(name string) []*node {
	var out []*node
	for _, c := range n.children {
		if c.name == name {
			out = append(out, c)
		}
	}
	return out
}

// parseXML reads a document into nodes, dropping namespaces.
func parseXML(body []byte) (*node, error) {
	dec := xml.NewDecoder(bytes.NewReader(body))
	var stack []*node
	var root *node
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the service answered with malformed XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{name: t.Name.Local}
			for _, a := range t.Attr {
				if n.attrs == nil {
					n.attrs = map[string]string{}
				}
				n.attrs[a.Name.Local] = a.Value
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			} else if root == nil {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(t)
			}
		}
	}
	if root == nil {
		return nil, errors.New("the service answered with an empty XML document")
	}
	return root, nil
}

// xmlStruct reads the members of a structure from an element.
func xmlStruct(api *awsmodel.API, sh *awsmodel.APIShape, n *node) any {
	if sh.Type != awsmodel.TStructure {
		return xmlValue2(api, 0, n)
	}
	out := value.NewObject(len(sh.Members))
	for _, m := range outputOrder(sh) {
		if m.Location != "" && m.Location != "body" {
			continue
		}
		name := orDefault(m.LocationName, m.Name)
		if m.XMLAttribute {
			if a, ok := n.attrs[name]; ok {
				out.Set(stepName(m.Name), a)
			}
			continue
		}
		msh := &api.Shapes[m.Shape]
		if (msh.Type == awsmodel.TList || msh.Type == awsmodel.TMap) && (m.Flattened || msh.Flattened) {
			elems := n.all(orDefault(m.LocationName, orDefault(msh.ElemName, m.Name)))
			if len(elems) == 0 {
				continue
			}
			if msh.Type == awsmodel.TList {
				arr := make([]any, len(elems))
				for i, e := range elems {
					arr[i] = xmlValue2(api, msh.Elem, e)
				}
				out.Set(stepName(m.Name), arr)
			} else {
				out.Set(stepName(m.Name), xmlEntries(api, msh, elems))
			}
			continue
		}
		c := n.child(name)
		if c == nil {
			continue
		}
		out.Set(stepName(m.Name), xmlValue2(api, m.Shape, c))
	}
	return out
}

func xmlEntries(api *awsmodel.API, sh *awsmodel.APIShape, entries []*node) *value.Object {
	out := value.NewObject(len(entries))
	for _, e := range entries {
		k := e.child(orDefault(sh.KeyName, "key"))
		v := e.child(orDefault(sh.ValueName, "value"))
		if k == nil {
			continue
		}
		var val any
		if v != nil {
			val = xmlValue2(api, sh.Elem, v)
		}
		out.Set(k.text, val)
	}
	return out
}

// xmlValue2 reads one element as the shape's type.
func xmlValue2(api *awsmodel.API, si int, n *node) any {
	sh := &api.Shapes[si]
	switch sh.Type {
	case awsmodel.TStructure:
		return xmlStruct(api, sh, n)
	case awsmodel.TList:
		items := n.all(orDefault(sh.ElemName, "member"))
		arr := make([]any, len(items))
		for i, e := range items {
			arr[i] = xmlValue2(api, sh.Elem, e)
		}
		return arr
	case awsmodel.TMap:
		return xmlEntries(api, sh, n.all("entry"))
	case awsmodel.TInteger, awsmodel.TFloat:
		t := strings.TrimSpace(n.text)
		if _, err := strconv.ParseFloat(t, 64); err == nil {
			return value.Number(t)
		}
		return t
	case awsmodel.TBoolean:
		return strings.TrimSpace(n.text) == "true"
	case awsmodel.TTimestamp:
		t := strings.TrimSpace(n.text)
		if ts, err := time.Parse(time.RFC3339Nano, t); err == nil {
			return formatTime(ts)
		}
		return t
	case awsmodel.TDocument:
		if len(n.children) > 0 {
			obj := value.NewObject(len(n.children))
			for _, c := range n.children {
				obj.Set(c.name, xmlValue2(api, 0, c))
			}
			return obj
		}
	}
	return n.text
}
