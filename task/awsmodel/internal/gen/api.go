package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stepd/stepd/task/awsmodel"
)

// apiModel is the part of a service-2.json that the API models keep.
type apiModel struct {
	Metadata struct {
		Protocol         string   `json:"protocol"`
		Protocols        []string `json:"protocols"`
		APIVersion       string   `json:"apiVersion"`
		EndpointPrefix   string   `json:"endpointPrefix"`
		SigningName      string   `json:"signingName"`
		ServiceID        string   `json:"serviceId"`
		TargetPrefix     string   `json:"targetPrefix"`
		JSONVersion      string   `json:"jsonVersion"`
		XMLNamespace     string   `json:"xmlNamespace"`
		GlobalEndpoint   string   `json:"globalEndpoint"`
		SignatureVersion string   `json:"signatureVersion"`
	} `json:"metadata"`
	Operations map[string]struct {
		Name string `json:"name"`
		HTTP struct {
			Method     string `json:"method"`
			RequestURI string `json:"requestUri"`
		} `json:"http"`
		Input    *apiRef `json:"input"`
		Output   *apiRef `json:"output"`
		Endpoint *struct {
			HostPrefix string `json:"hostPrefix"`
		} `json:"endpoint"`
	} `json:"operations"`
	Shapes map[string]*apiShape `json:"shapes"`
}

type apiRef struct {
	Shape            string `json:"shape"`
	Location         string `json:"location"`
	LocationName     string `json:"locationName"`
	QueryName        string `json:"queryName"`
	Flattened        bool   `json:"flattened"`
	XMLAttribute     bool   `json:"xmlAttribute"`
	ResultWrapper    string `json:"resultWrapper"`
	IdempotencyToken bool   `json:"idempotencyToken"`
	HostLabel        bool   `json:"hostLabel"`
	TimestampFormat  string `json:"timestampFormat"`
	JSONValue        bool   `json:"jsonvalue"`
	XMLNamespace     *struct {
		URI string `json:"uri"`
	} `json:"xmlNamespace"`
}

type apiShape struct {
	Type            string             `json:"type"`
	Members         map[string]*apiRef `json:"members"`
	Payload         string             `json:"payload"`
	Member          *apiRef            `json:"member"`
	Key             *apiRef            `json:"key"`
	Value           *apiRef            `json:"value"`
	Flattened       bool               `json:"flattened"`
	TimestampFormat string             `json:"timestampFormat"`
	Streaming       bool               `json:"streaming"`
	Document        bool               `json:"document"`
	Exception       bool               `json:"exception"`
	Error           *struct {
		Code string `json:"code"`
	} `json:"error"`
	// member order: botocore keeps members in the file's order, which a
	// Go map loses; memberOrder restores it.
	memberOrder []string
}

// UnmarshalJSON keeps the order of a structure's members, which XML
// protocols send in model order.
func (s *apiShape) UnmarshalJSON(b []byte) error {
	type plain apiShape
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	var raw struct {
		Members json.RawMessage `json:"members"`
	}
	if err := json.Unmarshal(b, &raw); err != nil || len(raw.Members) == 0 {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw.Members))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		s.memberOrder = append(s.memberOrder, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

// writeAPI writes the API models of the services, or of every service in
// data when services is ["all"].
func writeAPI(data, out string, services []string) error {
	if len(services) == 1 && services[0] == "all" {
		dirs, err := os.ReadDir(data)
		if err != nil {
			return fmt.Errorf("listing %s: %w", data, err)
		}
		services = services[:0]
		for _, d := range dirs {
			if m, _ := filepath.Glob(filepath.Join(data, d.Name(), "*", "service-2.json*")); d.IsDir() && len(m) > 0 {
				services = append(services, d.Name())
			}
		}
	}
	file := awsmodel.APIFile{Services: map[string]*awsmodel.API{}}
	for _, name := range services {
		raw, err := readModel(data, name)
		if err != nil {
			return err
		}
		var m apiModel
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("parsing %s: %w", name, err)
		}
		api, err := reduceAPI(&m)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if api != nil {
			file.Services[name] = api
		}
	}
	return writeZip(out, file)
}

// writeZip writes one compressed entry per service (<name>.json), so that
// a caller decompresses only the services it calls.
func writeZip(out string, file awsmodel.APIFile) error {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	for _, name := range slices.Sorted(maps.Keys(file.Services)) {
		js, err := json.Marshal(file.Services[name])
		if err != nil {
			return fmt.Errorf("encoding %s: %w", name, err)
		}
		// A fixed time keeps the file the same from run to run.
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name + ".json", Method: zip.Deflate, Modified: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			return fmt.Errorf("compressing %s: %w", name, err)
		}
		if _, err := w.Write(js); err != nil {
			return fmt.Errorf("compressing %s: %w", name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("compressing %s: %w", out, err)
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// readModel reads the newest version of a service's model.
func readModel(data, name string) ([]byte, error) {
	versions, err := filepath.Glob(filepath.Join(data, name, "*", "service-2.json*"))
	if err != nil || len(versions) == 0 {
		return nil, fmt.Errorf("no model for %s under %s", name, data)
	}
	slices.Sort(versions)
	path := versions[len(versions)-1]
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
	}
	return raw, nil
}

type apiReducer struct {
	m      *apiModel
	api    *awsmodel.API
	named  map[string]int
	shared map[string]int
}

// reduceAPI keeps what a caller needs; it returns nil for a service whose
// protocol no caller speaks (smithy-rpc-v2-cbor only) or that signs
// otherwise than with SigV4.
func reduceAPI(m *apiModel) (*awsmodel.API, error) {
	md := m.Metadata
	protocol := md.Protocol
	// Prefer a protocol the caller speaks when the model lists several.
	for _, p := range md.Protocols {
		if slices.Contains([]string{awsmodel.ProtocolJSON, awsmodel.ProtocolRESTJSON, awsmodel.ProtocolRESTXML, awsmodel.ProtocolQuery, awsmodel.ProtocolEC2}, p) {
			protocol = p
			break
		}
	}
	switch protocol {
	case awsmodel.ProtocolJSON, awsmodel.ProtocolRESTJSON, awsmodel.ProtocolRESTXML, awsmodel.ProtocolQuery, awsmodel.ProtocolEC2:
	default:
		return nil, nil
	}
	if md.SignatureVersion != "" && md.SignatureVersion != "v4" && md.SignatureVersion != "s3" && md.SignatureVersion != "s3v4" {
		return nil, nil
	}
	api := &awsmodel.API{Protocol: protocol, APIVersion: md.APIVersion, EndpointPrefix: md.EndpointPrefix,
		ServiceID: md.ServiceID, TargetPrefix: md.TargetPrefix, JSONVersion: md.JSONVersion, XMLNamespace: md.XMLNamespace,
		Ops: map[string]*awsmodel.Op{}, Shapes: []awsmodel.APIShape{{Type: awsmodel.TDocument}}}
	if md.SigningName != "" && md.SigningName != md.EndpointPrefix {
		api.SigningName = md.SigningName
	}
	if md.GlobalEndpoint != "" {
		api.GlobalRegion = "us-east-1"
	}
	r := &apiReducer{m: m, api: api, named: map[string]int{}, shared: map[string]int{}}
	for _, name := range slices.Sorted(maps.Keys(m.Operations)) {
		o := m.Operations[name]
		op := &awsmodel.Op{Name: name, Method: o.HTTP.Method, URI: o.HTTP.RequestURI, Input: -1, Output: -1}
		if o.Endpoint != nil {
			op.HostPrefix = o.Endpoint.HostPrefix
		}
		if protocol == awsmodel.ProtocolJSON || protocol == awsmodel.ProtocolQuery || protocol == awsmodel.ProtocolEC2 {
			op.Method, op.URI = "", "" // always POST /
		}
		var err error
		if o.Input != nil {
			if op.Input, err = r.shape(o.Input.Shape); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if protocol == awsmodel.ProtocolRESTXML {
				op.XMLName = o.Input.LocationName
				if o.Input.XMLNamespace != nil {
					op.XMLNamespace = o.Input.XMLNamespace.URI
				}
			}
		}
		if o.Output != nil {
			if op.Output, err = r.shape(o.Output.Shape); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			op.ResultWrapper = o.Output.ResultWrapper
		}
		api.Ops[strings.ToLower(name)] = op
	}
	for _, name := range slices.Sorted(maps.Keys(m.Shapes)) {
		s := m.Shapes[name]
		if !s.Exception {
			continue
		}
		if api.Errors == nil {
			api.Errors = map[string]string{}
		}
		api.Errors[name] = name
		if s.Error != nil && s.Error.Code != "" {
			api.Errors[s.Error.Code] = name
		}
	}
	return api, nil
}

var apiTypes = map[string]string{
	"string": awsmodel.TString, "integer": awsmodel.TInteger, "long": awsmodel.TInteger, "short": awsmodel.TInteger,
	"byte": awsmodel.TInteger, "float": awsmodel.TFloat, "double": awsmodel.TFloat, "boolean": awsmodel.TBoolean,
	"timestamp": awsmodel.TTimestamp, "blob": awsmodel.TBlob, "bigdecimal": awsmodel.TFloat, "biginteger": awsmodel.TInteger,
}

func (r *apiReducer) shape(name string) (int, error) {
	if i, ok := r.named[name]; ok {
		return i, nil
	}
	s := r.m.Shapes[name]
	if s == nil {
		return 0, fmt.Errorf("%w %q", errUnknownShape, name)
	}
	switch s.Type {
	case "structure", "union":
		if s.Document {
			r.named[name] = 0
			return 0, nil
		}
		i := len(r.api.Shapes)
		r.api.Shapes = append(r.api.Shapes, awsmodel.APIShape{})
		r.named[name] = i
		ws := awsmodel.APIShape{Type: awsmodel.TStructure, Payload: s.Payload}
		order := s.memberOrder
		if len(order) != len(s.Members) {
			order = slices.Sorted(maps.Keys(s.Members))
		}
		for _, n := range order {
			ref := s.Members[n]
			si, err := r.shape(ref.Shape)
			if err != nil {
				return 0, err
			}
			m := awsmodel.APIMember{Name: n, Shape: si, Location: ref.Location, LocationName: ref.LocationName,
				QueryName: ref.QueryName, Flattened: ref.Flattened, XMLAttribute: ref.XMLAttribute,
				IdempotencyToken: ref.IdempotencyToken, HostLabel: ref.HostLabel, TimestampFormat: ref.TimestampFormat}
			if m.LocationName == n {
				m.LocationName = ""
			}
			if ref.XMLNamespace != nil {
				m.XMLNamespace = ref.XMLNamespace.URI
			}
			m.JSONValue = ref.JSONValue
			ws.Members = append(ws.Members, m)
		}
		r.api.Shapes[i] = ws
		return i, nil
	case "list", "map":
		i := len(r.api.Shapes)
		r.api.Shapes = append(r.api.Shapes, awsmodel.APIShape{})
		r.named[name] = i
		ws := awsmodel.APIShape{Type: awsmodel.TList, Flattened: s.Flattened}
		ref := s.Member
		if s.Type == "map" {
			ws.Type, ref = awsmodel.TMap, s.Value
			if s.Key == nil {
				return 0, fmt.Errorf("map %q has no key shape", name)
			}
			k, err := r.shape(s.Key.Shape)
			if err != nil {
				return 0, err
			}
			ws.Key, ws.KeyName = k, s.Key.LocationName
			if ref != nil {
				ws.ValueName = ref.LocationName
			}
		} else if ref != nil {
			ws.ElemName = ref.LocationName
		}
		if ref == nil {
			return 0, fmt.Errorf("%s %q has no item shape", s.Type, name)
		}
		e, err := r.shape(ref.Shape)
		if err != nil {
			return 0, err
		}
		ws.Elem = e
		r.api.Shapes[i] = ws
		return i, nil
	}
	t, ok := apiTypes[s.Type]
	if !ok {
		return 0, fmt.Errorf("shape %q has type %q", name, s.Type)
	}
	ws := awsmodel.APIShape{Type: t, TimestampFormat: s.TimestampFormat, Streaming: s.Streaming}
	key, err := json.Marshal(ws)
	if err != nil {
		return 0, fmt.Errorf("shape %q: %w", name, err)
	}
	i, ok := r.shared[string(key)]
	if !ok {
		i = len(r.api.Shapes)
		r.api.Shapes = append(r.api.Shapes, ws)
		r.shared[string(key)] = i
	}
	r.named[name] = i
	return i, nil
}
