// Package awsmodel holds the result shapes of the AWS service APIs that
// Step Functions' service integrations call (types, required members,
// bounds and enums of each operation's output, reduced from the AWS SDKs'
// service models) and checks a task result against them, as AWS's
// TestState checks a mocked result.
//
// The models are generated data (models.json.gz, about 105 KiB, see
// internal/gen, which lists the services kept), reduced from the service
// models that the AWS SDK for Python ships (botocore 1.29.27, Apache
// License 2.0). Run go generate with botocore's data installed to refresh
// them.
//
// It also holds how to call every operation of the 421 services in the AWS
// SDK's models (api.zip, about 1.5 MiB, from botocore 1.43.11): each
// service's protocol, its input and output shapes with their HTTP bindings,
// and the error codes it declares (Operation). task/awssdk calls services
// with them.
//
// It imports only its wire format and value, and must not import
// task/awssdk, which calls services with it, the engine or anything above.
package awsmodel

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/stepd/stepd/task/awsmodel/internal/wire"
)

//go:embed models.json.gz
var modelData []byte

// load decodes the embedded models once, indexing services by the names
// integration ARNs use for them.
var load = sync.OnceValues(func() (map[string]*wire.Service, error) {
	zr, err := gzip.NewReader(bytes.NewReader(modelData))
	if err != nil {
		return nil, fmt.Errorf("awsmodel: reading the embedded models: %w", err)
	}
	var f wire.File
	if err := json.NewDecoder(zr).Decode(&f); err != nil {
		return nil, fmt.Errorf("awsmodel: decoding the embedded models: %w", err)
	}
	byName := map[string]*wire.Service{}
	for name, svc := range f.Services {
		if err := checkService(svc); err != nil {
			return nil, fmt.Errorf("awsmodel: service %s: %w", name, err)
		}
		byName[name] = svc
		// AWS SDK integrations name services as the SDK clients do:
		// emrcontainers, redshiftdata ...
		byName[strings.ReplaceAll(name, "-", "")] = svc
	}
	for alias, name := range aliases {
		if svc, ok := f.Services[name]; ok {
			byName[alias] = svc
		}
	}
	return byName, nil
})

// aliases are the integration service names that differ from the model
// names beyond dropped hyphens: AWS SDK integrations' sfn, eventbridge and
// cloudwatchlogs, and the optimized integrations' states.
var aliases = map[string]string{
	"sfn":            "stepfunctions",
	"states":         "stepfunctions",
	"eventbridge":    "events",
	"cloudwatchlogs": "logs",
}

// checkService makes sure every shape index is in range, so that checking
// a result cannot index out of bounds.
func checkService(svc *wire.Service) error {
	n := len(svc.Shapes)
	if n == 0 || svc.Shapes[0].Type != wire.Any {
		return fmt.Errorf("shape 0 is not %q", wire.Any)
	}
	for op, i := range svc.Ops {
		if i < 0 || i >= n {
			return fmt.Errorf("operation %s: shape %d out of range", op, i)
		}
	}
	for i, s := range svc.Shapes {
		if s.Elem < 0 || s.Elem >= n {
			return fmt.Errorf("shape %d: item shape %d out of range", i, s.Elem)
		}
		for _, m := range s.Members {
			if m.Shape < 0 || m.Shape >= n {
				return fmt.Errorf("shape %d: member %s: shape %d out of range", i, m.Name, m.Shape)
			}
		}
	}
	return nil
}

// Shape is the result shape of one integration.
type Shape struct {
	svc *wire.Service
	i   int
	// optimized: an optimized integration, whose blob members (Lambda's
	// Payload) carry JSON values.
	optimized bool
}

// ResultShape returns the shape of the result a Task state gets from the
// service integration named by its Resource: an AWS SDK integration
// (arn:aws:states:::aws-sdk:s3:getObject) or an optimized one
// (arn:aws:states:::dynamodb:putItem) in the request-response pattern. It
// reports false for resources it has no model for: other services and
// actions, Lambda function and activity ARNs, and the .sync and
// .waitForTaskToken patterns, whose results are not the API's output.
func ResultShape(resource string) (Shape, bool, error) {
	parts := strings.Split(resource, ":")
	if len(parts) < 7 || parts[0] != "arn" || parts[2] != "states" || parts[3] != "" || parts[4] != "" {
		return Shape{}, false, nil
	}
	service, action, optimized := parts[5], parts[6], true
	if service == "aws-sdk" {
		if len(parts) != 8 {
			return Shape{}, false, nil
		}
		service, action, optimized = parts[6], parts[7], false
	} else if len(parts) != 7 {
		return Shape{}, false, nil
	}
	if strings.Contains(action, ".") {
		return Shape{}, false, nil
	}
	services, err := load()
	if err != nil {
		return Shape{}, false, err
	}
	svc := services[service]
	if svc == nil {
		return Shape{}, false, nil
	}
	i, ok := svc.Ops[strings.ToLower(action)]
	if !ok {
		return Shape{}, false, nil
	}
	return Shape{svc: svc, i: i, optimized: optimized}, true, nil
}
