package awsmodel

import (
	"archive/zip"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// The API models (api.zip, one entry <service>.json per service) describe how to call each operation: the
// service's protocol, the HTTP binding of every input and output member,
// and the error codes it declares. They are reduced from the same botocore
// data as the output models by internal/gen.

//go:generate go run ./internal/gen -out models.json.gz -api-out api.zip

//go:embed api.zip
var apiData []byte

// The protocols of AWS services.
const (
	ProtocolJSON     = "json"      // AWS JSON 1.0/1.1: POST /, X-Amz-Target
	ProtocolRESTJSON = "rest-json" // HTTP bindings, JSON body
	ProtocolRESTXML  = "rest-xml"  // HTTP bindings, XML body
	ProtocolQuery    = "query"     // form-encoded Action, XML answer
	ProtocolEC2      = "ec2"       // query with EC2's naming
)

// APIFile is what the generator writes into api.zip, one entry per
// service: services by the name of their model in the AWS SDKs' data.
type APIFile struct {
	Services map[string]*API `json:"s"`
}

// API is how to call one service.
type API struct {
	Protocol       string `json:"p"`
	APIVersion     string `json:"v"`
	EndpointPrefix string `json:"ep"`
	SigningName    string `json:"sn,omitempty"`
	// ServiceID names the service (AWS_ENDPOINT_URL_<ServiceID>, and the
	// prefix of error names).
	ServiceID    string `json:"id"`
	TargetPrefix string `json:"tp,omitempty"`
	JSONVersion  string `json:"jv,omitempty"`
	XMLNamespace string `json:"ns,omitempty"`
	// GlobalRegion is set for services with one global endpoint (IAM):
	// the region requests are signed for.
	GlobalRegion string `json:"gr,omitempty"`
	// Ops maps an operation name, lower-cased, to the operation.
	Ops map[string]*Op `json:"o"`
	// Errors maps an error code a response carries to the name of the
	// error shape the model declares for it.
	Errors map[string]string `json:"e,omitempty"`
	// Shapes are the input and output shapes; shape 0 is a document (any
	// JSON value).
	Shapes []APIShape `json:"sh"`
}

// Op is one operation.
type Op struct {
	Name   string `json:"n"`
	Method string `json:"m,omitempty"`
	URI    string `json:"u,omitempty"`
	// Input and Output are shape indexes; -1 when the operation has none.
	Input  int `json:"i"`
	Output int `json:"o"`
	// ResultWrapper is the element that wraps a query protocol answer.
	ResultWrapper string `json:"w,omitempty"`
	// XMLName and XMLNamespace name the element that holds a rest-xml
	// request's body members (Route 53, CloudFront).
	XMLName      string `json:"xn,omitempty"`
	XMLNamespace string `json:"xns,omitempty"`
	// HostPrefix goes before the endpoint's host, its {Labels} filled from
	// the input's HostLabel members (sync- for StartSyncExecution).
	HostPrefix string `json:"hp,omitempty"`
}

// API shape types.
const (
	TDocument  = "d"
	TString    = "s"
	TInteger   = "i" // integer, long, byte, short
	TFloat     = "f" // float, double
	TBoolean   = "b"
	TTimestamp = "t"
	TBlob      = "x"
	TStructure = "o"
	TList      = "l"
	TMap       = "m"
)

// APIShape is one shape.
type APIShape struct {
	Type    string      `json:"t"`
	Members []APIMember `json:"m,omitempty"`
	// Payload names the member that is the whole HTTP body (rest
	// protocols).
	Payload string `json:"p,omitempty"`
	// Elem is a list's item shape or a map's value shape; Key a map's key
	// shape.
	Elem int `json:"e,omitempty"`
	Key  int `json:"k,omitempty"`
	// ElemName, KeyName and ValueName are the XML names of list items and
	// map entries; Flattened marks a flattened XML list or map.
	ElemName  string `json:"en,omitempty"`
	KeyName   string `json:"kn,omitempty"`
	ValueName string `json:"vn,omitempty"`
	Flattened bool   `json:"f,omitempty"`
	// TimestampFormat is iso8601, rfc822 or unixTimestamp when the model
	// sets it.
	TimestampFormat string `json:"tf,omitempty"`
	// Streaming marks a blob sent or received as the raw body.
	Streaming bool `json:"st,omitempty"`
}

// APIMember is a structure member. Name is the model's name; Step
// Functions takes and returns it with its first letter in upper case.
type APIMember struct {
	Name  string `json:"n"`
	Shape int    `json:"s"`
	// Location is where a rest protocol puts the member: uri, querystring,
	// header, headers (a map, LocationName is the prefix) or statusCode;
	// empty for the body.
	Location     string `json:"l,omitempty"`
	LocationName string `json:"ln,omitempty"`
	// QueryName is the EC2 protocol's name for the member.
	QueryName    string `json:"qn,omitempty"`
	Flattened    bool   `json:"f,omitempty"`
	XMLAttribute bool   `json:"a,omitempty"`
	XMLNamespace string `json:"ns,omitempty"`
	// IdempotencyToken members are filled with a UUID when absent.
	IdempotencyToken bool `json:"it,omitempty"`
	// HostLabel members are part of the endpoint's host.
	HostLabel bool `json:"hl,omitempty"`
	// TimestampFormat overrides the shape's.
	TimestampFormat string `json:"tf,omitempty"`
	// JSONValue marks a string header that carries base64 JSON.
	JSONValue bool `json:"jv,omitempty"`
}

// loadAPIs indexes the embedded API models once, by service; each is
// decompressed when it is first asked for.
var loadAPIs = sync.OnceValues(func() (map[string]*zip.File, error) {
	zr, err := zip.NewReader(bytes.NewReader(apiData), int64(len(apiData)))
	if err != nil {
		return nil, fmt.Errorf("awsmodel: reading the embedded API models: %w", err)
	}
	byName := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		byName[strings.TrimSuffix(f.Name, ".json")] = f
	}
	return byName, nil
})

var (
	apiMu    sync.Mutex
	apiCache = map[string]*API{}
)

// loadAPI returns the API model of a service named as a model (s3,
// redshift-data), as an AWS SDK integration (redshiftdata) or by an alias
// (sfn, eventbridge, cloudwatchlogs); nil when there is none.
func loadAPI(service string) (*API, error) {
	raw, err := loadAPIs()
	if err != nil {
		return nil, err
	}
	name := service
	if n, ok := aliases[service]; ok {
		name = n
	}
	if _, ok := raw[name]; !ok {
		for model := range raw {
			if strings.ReplaceAll(model, "-", "") == service {
				name = model
				break
			}
		}
	}
	f, ok := raw[name]
	if !ok {
		return nil, nil
	}
	apiMu.Lock()
	defer apiMu.Unlock()
	if api, ok := apiCache[name]; ok {
		return api, nil
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("awsmodel: reading the API model of %s: %w", name, err)
	}
	defer rc.Close()
	var api API
	if err := json.NewDecoder(rc).Decode(&api); err != nil {
		return nil, fmt.Errorf("awsmodel: decoding the API model of %s: %w", name, err)
	}
	if err := checkAPI(&api); err != nil {
		return nil, fmt.Errorf("awsmodel: API model of %s: %w", name, err)
	}
	apiCache[name] = &api
	return &api, nil
}

// checkAPI makes sure every shape index is in range.
func checkAPI(svc *API) error {
	n := len(svc.Shapes)
	if n == 0 || svc.Shapes[0].Type != TDocument {
		return fmt.Errorf("shape 0 is not a document")
	}
	in := func(i int) bool { return i >= 0 && i < n }
	for name, op := range svc.Ops {
		if (op.Input != -1 && !in(op.Input)) || (op.Output != -1 && !in(op.Output)) {
			return fmt.Errorf("operation %s: shape out of range", name)
		}
	}
	for i, s := range svc.Shapes {
		if !in(s.Elem) || !in(s.Key) {
			return fmt.Errorf("shape %d: item shape out of range", i)
		}
		for _, m := range s.Members {
			if !in(m.Shape) {
				return fmt.Errorf("shape %d: member %s: shape %d out of range", i, m.Name, m.Shape)
			}
		}
	}
	return nil
}

// Operation finds an operation by the names a Task state's Resource gives
// the service (s3, sfn, dynamodb, eventbridge ...) and the action
// (getObject, putItem), ignoring the action's case. It reports false when
// no embedded model has it.
func Operation(service, action string) (*API, *Op, bool, error) {
	svc, err := loadAPI(service)
	if err != nil || svc == nil {
		return nil, nil, false, err
	}
	op := svc.Ops[strings.ToLower(action)]
	if op == nil {
		return svc, nil, false, nil
	}
	return svc, op, true, nil
}

// APIServices lists the services whose API models are embedded, by their
// model names.
func APIServices() ([]string, error) {
	raw, err := loadAPIs()
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(raw)), nil
}
