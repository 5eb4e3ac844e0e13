// Command gen writes the AWS API models that awsmodel embeds. It reads the
// service models of the AWS SDKs' data folder (botocore's
// data/<service>/<version>/service-2.json, plain or gzipped), keeps for
// each operation of the chosen services the shapes its output reaches,
// reduced to types, required members, bounds and enums, and writes them
// as gzipped JSON (the format of awsmodel/internal/wire); with -api-out it
// also writes how to call every operation of every service (protocols,
// input and output shapes with their HTTP bindings, error codes) to a zip
// of one entry per service (api.zip).
//
//	go run ./internal/gen -data /usr/lib/python3/dist-packages/botocore/data -out models.json.gz -api-out api.zip
//
// It is a tool that go generate runs, not part of stepd's binary: it
// imports only awsmodel and its wire format, and must not import anything
// else of stepd's.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stepd/stepd/task/awsmodel/internal/wire"
)

// defaultServices are the services whose models are kept: those Step
// Functions' optimized integrations call and the ones AWS SDK
// integrations use most.
const defaultServices = "apigateway,athena,batch,cloudwatch,codebuild,comprehend,dynamodb,ecs,eks,emr,emr-containers,emr-serverless," +
	"events,firehose,glue,iam,kinesis,kms,lambda,logs,pipes,redshift-data,rekognition,s3,sagemaker,scheduler,secretsmanager," +
	"sns,sqs,ssm,stepfunctions,sts,textract,translate"

func main() {
	data := flag.String("data", "/usr/lib/python3/dist-packages/botocore/data", "the AWS SDK data folder (botocore's data)")
	out := flag.String("out", "models.json.gz", "the file to write")
	services := flag.String("services", defaultServices, "comma-separated services to keep")
	apiOut := flag.String("api-out", "", "also write the API models (inputs, protocols, HTTP bindings, errors) to this file")
	apiServices := flag.String("api-services", "all", "comma-separated services whose API models to keep, or all")
	flag.Parse()
	if err := run(*data, *out, strings.Split(*services, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if *apiOut == "" {
		return
	}
	if err := writeAPI(*data, *apiOut, strings.Split(*apiServices, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(data, out string, services []string) error {
	file := wire.File{Services: map[string]*wire.Service{}}
	for _, name := range services {
		m, err := loadModel(data, name)
		if err != nil {
			return err
		}
		svc, err := reduce(m)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		file.Services[name] = svc
	}
	js, err := json.Marshal(file)
	if err != nil {
		return fmt.Errorf("encoding the models: %w", err)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("compressing the models: %w", err)
	}
	if _, err := zw.Write(js); err != nil {
		return fmt.Errorf("compressing the models: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("compressing the models: %w", err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the models: %w", err)
	}
	return nil
}

// model is the part of a service-2.json that is read.
type model struct {
	Operations map[string]struct {
		Output *struct {
			Shape string `json:"shape"`
		} `json:"output"`
	} `json:"operations"`
	Shapes map[string]*shape `json:"shapes"`
}

type shape struct {
	Type     string              `json:"type"`
	Members  map[string]shapeRef `json:"members"`
	Required []string            `json:"required"`
	Member   *shapeRef           `json:"member"`
	Value    *shapeRef           `json:"value"`
	Min      *float64            `json:"min"`
	Max      *float64            `json:"max"`
	Enum     []string            `json:"enum"`
	Document bool                `json:"document"`
}

type shapeRef struct {
	Shape string `json:"shape"`
}

// loadModel reads the newest version of a service's model.
func loadModel(data, name string) (*model, error) {
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
	var m model
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	return &m, nil
}

// reducer turns a model's shapes into wire shapes, numbering named
// aggregate shapes once each and sharing equal scalar shapes.
type reducer struct {
	m       *model
	svc     *wire.Service
	named   map[string]int
	scalars map[string]int
}

func reduce(m *model) (*wire.Service, error) {
	r := &reducer{m: m, svc: &wire.Service{Ops: map[string]int{}, Shapes: []wire.Shape{{Type: wire.Any}}},
		named: map[string]int{}, scalars: map[string]int{}}
	ops := make([]string, 0, len(m.Operations))
	for name := range m.Operations {
		ops = append(ops, name)
	}
	slices.Sort(ops)
	for _, op := range ops {
		o := m.Operations[op]
		if o.Output == nil {
			continue
		}
		i, err := r.shape(o.Output.Shape)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		r.svc.Ops[strings.ToLower(op)] = i
	}
	return r.svc, nil
}

var errUnknownShape = errors.New("unknown shape")

func (r *reducer) shape(name string) (int, error) {
	if i, ok := r.named[name]; ok {
		return i, nil
	}
	s := r.m.Shapes[name]
	if s == nil {
		return 0, fmt.Errorf("%w %q", errUnknownShape, name)
	}
	switch s.Type {
	case "structure":
		if s.Document {
			return 0, nil
		}
		i := r.reserve(name)
		ws := wire.Shape{Type: wire.Structure}
		names := make([]string, 0, len(s.Members))
		for n := range s.Members {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			si, err := r.shape(s.Members[n].Shape)
			if err != nil {
				return 0, err
			}
			ws.Members = append(ws.Members, wire.Member{Name: upperFirst(n), Shape: si})
		}
		for _, n := range s.Required {
			ws.Required = append(ws.Required, upperFirst(n))
		}
		r.svc.Shapes[i] = ws
		return i, nil
	case "list", "map":
		i := r.reserve(name)
		ref := s.Member
		ws := wire.Shape{Type: wire.List, Min: s.Min, Max: s.Max}
		if s.Type == "map" {
			ref, ws.Type = s.Value, wire.Map
		}
		if ref == nil {
			return 0, fmt.Errorf("%s %q has no item shape", s.Type, name)
		}
		e, err := r.shape(ref.Shape)
		if err != nil {
			return 0, err
		}
		ws.Elem = e
		r.svc.Shapes[i] = ws
		return i, nil
	}
	ws := wire.Shape{Min: s.Min, Max: s.Max}
	switch s.Type {
	case "string":
		ws.Type, ws.Enum = wire.String, s.Enum
	case "integer", "long":
		ws.Type = wire.Integer
	case "float", "double":
		ws.Type = wire.Float
	case "boolean":
		ws.Type = wire.Boolean
	case "timestamp":
		ws.Type = wire.Timestamp
	case "blob":
		ws.Type = wire.Blob
	default:
		return 0, fmt.Errorf("shape %q has type %q", name, s.Type)
	}
	key, err := json.Marshal(ws)
	if err != nil {
		return 0, fmt.Errorf("shape %q: %w", name, err)
	}
	i, ok := r.scalars[string(key)]
	if !ok {
		i = len(r.svc.Shapes)
		r.svc.Shapes = append(r.svc.Shapes, ws)
		r.scalars[string(key)] = i
	}
	r.named[name] = i
	return i, nil
}

// reserve numbers a named aggregate shape before its members are reduced,
// so that recursive shapes refer to it.
func (r *reducer) reserve(name string) int {
	i := len(r.svc.Shapes)
	r.svc.Shapes = append(r.svc.Shapes, wire.Shape{})
	r.named[name] = i
	return i
}

// upperFirst is a member name as Step Functions' AWS SDK integrations
// return it: the model's name with its first letter in upper case.
func upperFirst(s string) string {
	c, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(c)) + s[n:]
}
