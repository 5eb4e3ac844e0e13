package awssdk

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/awsmodel"
	"github.com/stepd/stepd/value"
)

// apiError names a service's error answer as Step Functions does:
// <Service>.<Error>, both in PascalCase, the error with an Exception
// suffix (S3.NoSuchKeyException); a code the model does not declare is
// <Service>.<Service>Exception (DynamoDb.DynamoDbException), as the AWS
// SDK for Java that Step Functions uses reports it. The cause is the
// message with the SDK's details.
//
// The optimized integrations name errors as the AWS SDK for Java 1.x did:
// DynamoDB.ConditionalCheckFailedException, an undeclared code as
// DynamoDB.AmazonDynamoDBException, the cause with "(Service:
// AmazonDynamoDBv2; Status Code: 400; Error Code: ValidationException;
// Request ID: ...; Proxy: null)", as recorded.
func apiError(api *awsmodel.API, resp *response, c call) task.Result {
	code, wire, msg := errorCode(api, resp)
	svc := ServiceName(api.ServiceID)
	generic := svc + "Exception"
	v1, isV1 := v1Names[c.service]
	if c.optimized && isV1 {
		svc, generic = v1.prefix, v1.exception
	}
	name := generic
	if shape, ok := api.Errors[code]; ok {
		name = shape
		if !strings.HasSuffix(name, "Exception") {
			name += "Exception"
		}
	}
	if msg == "" {
		msg = http.StatusText(resp.status)
	}
	reqID := firstHeader(resp.header, "X-Amzn-Requestid", "X-Amz-Request-Id")
	if reqID == "" {
		reqID = "null" // as the AWS SDK for Java writes a missing one
	}
	if c.optimized && isV1 {
		return task.Result{Error: svc + "." + name, Cause: fmt.Sprintf("%s (Service: %s; Status Code: %d; Error Code: %s; Request ID: %s; Proxy: null)",
			msg, v1.service, resp.status, wire, reqID)}
	}
	cause := fmt.Sprintf("%s (Service: %s, Status Code: %d, Request ID: %s", msg, svc, resp.status, reqID)
	if ext := resp.header.Get("X-Amz-Id-2"); ext != "" && api.EndpointPrefix == "s3" {
		cause += ", Extended Request ID: " + ext
	}
	// The state's Retry decides what to try again: one attempt, which
	// causes recorded since 2025 count.
	return task.Result{Error: svc + "." + name, Cause: cause + ") (SDK Attempt Count: 1)"}
}

// clientError names a call of an optimized integration that got no
// answer as Step Functions does: <Service>.SdkClientException, the cause
// "Unable to execute HTTP request: " and the reason as Java gives it (a
// host that does not resolve is "<host>: Name or service not known"), as
// recorded for SQS (test_task_service_sqs.py::test_send_message_no_such_queue).
func clientError(prefix, host string, err error) task.Result {
	reason := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		reason = ue.Err.Error()
	}
	var de *net.DNSError
	if errors.As(err, &de) && de.IsNotFound {
		h := de.Name
		if h == "" {
			h, _, _ = strings.Cut(host, ":")
		}
		reason = h + ": Name or service not known"
	}
	return task.Result{Error: prefix + ".SdkClientException", Cause: "Unable to execute HTTP request: " + reason}
}

// v1Names are the names the AWS SDK for Java 1.x gives the services of the
// optimized integrations: the error prefix, the exception of undeclared
// codes, and the service in causes.
var v1Names = map[string]struct{ prefix, exception, service string }{
	"dynamodb":  {"DynamoDB", "AmazonDynamoDBException", "AmazonDynamoDBv2"},
	"sqs":       {"SQS", "AmazonSQSException", "AmazonSQS"},
	"sns":       {"SNS", "AmazonSNSException", "AmazonSNS"},
	"events":    {"EventBridge", "AmazonEventBridgeException", "AmazonEventBridge"},
	"ecs":       {"ECS", "AmazonECSException", "AmazonECS"},
	"batch":     {"Batch", "AWSBatchException", "AWSBatch"},
	"glue":      {"Glue", "AWSGlueException", "AWSGlue"},
	"codebuild": {"CodeBuild", "AWSCodeBuildException", "AWSCodeBuild"},
	"athena":    {"Athena", "AmazonAthenaException", "AmazonAthena"},
}

func firstHeader(h http.Header, names ...string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// errorCode reads the error code and message of an error answer in the
// service's protocol: the code the model names the error by, and the code
// as the answer gives it, which the SDK for Java 1.x reports (SQS's JSON
// answers give the query code, AWS.SimpleQueueService.NonExistentQueue,
// beside the shape's name, QueueDoesNotExist).
func errorCode(api *awsmodel.API, resp *response) (code, wire, msg string) {
	switch api.Protocol {
	case awsmodel.ProtocolJSON, awsmodel.ProtocolRESTJSON:
		if q := resp.header.Get("X-Amzn-Query-Error"); q != "" {
			// awsQueryCompatible services (SQS) name the query code.
			code, _, _ = strings.Cut(q, ";")
		}
		if t := resp.header.Get("X-Amzn-Errortype"); t != "" && code == "" {
			code = t
		}
		if v, err := value.Parse(resp.body); err == nil {
			if obj, ok := v.(*value.Object); ok {
				for _, k := range []string{"__type", "code", "Code"} {
					if s, ok := obj.Get(k); ok {
						if str, ok := s.(string); ok && code == "" {
							code = str
						}
					}
				}
				for _, k := range []string{"message", "Message", "errorMessage"} {
					if s, ok := obj.Get(k); ok {
						if str, ok := s.(string); ok {
							msg = str
							break
						}
					}
				}
			}
		}
		code = shortCode(code)
		wire = code
		if _, ok := api.Errors[code]; !ok {
			// The JSON body names the error shape; the query code maps to it.
			if shape := jsonShapeName(resp.body); shape != "" {
				if _, ok := api.Errors[shape]; ok {
					code = shape
				}
			}
		}
	default:
		if root, err := parseXML(resp.body); err == nil {
			e := findElement(root, "Error")
			if e == nil {
				e = root
			}
			if c := e.child("Code"); c != nil {
				code = strings.TrimSpace(c.text)
			}
			if m := e.child("Message"); m != nil {
				msg = strings.TrimSpace(m.text)
			}
		}
		if code == "" && resp.status == http.StatusNotFound {
			code = "NotFound"
		}
		wire = code
	}
	return code, wire, msg
}

// shortCode drops a code's namespace (aws.protocoltests#Name) and
// suffix (Name:http://...).
func shortCode(code string) string {
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	if i := strings.IndexByte(code, ':'); i >= 0 {
		code = code[:i]
	}
	return strings.TrimSpace(code)
}

func jsonShapeName(body []byte) string {
	v, err := value.Parse(body)
	if err != nil {
		return ""
	}
	obj, ok := v.(*value.Object)
	if !ok {
		return ""
	}
	t, _ := obj.Get("__type")
	s, _ := t.(string)
	return shortCode(s)
}

func findElement(n *node, name string) *node {
	if n.name == name {
		return n
	}
	for _, c := range n.children {
		if f := findElement(c, name); f != nil {
			return f
		}
	}
	return nil
}

// ServiceName is a service's name in error names: its service ID in
// PascalCase, acronyms capitalized as words (DynamoDB is DynamoDb, SFN is
// Sfn, ACM PCA is AcmPca), as the AWS SDK for Java names its clients.
func ServiceName(serviceID string) string {
	var b strings.Builder
	for _, word := range strings.FieldsFunc(serviceID, func(r rune) bool { return r == ' ' || r == '-' || r == '_' }) {
		rs := []rune(word)
		start := 0
		for i := 1; i <= len(rs); i++ {
			boundary := i == len(rs)
			if !boundary {
				prev, cur := rs[i-1], rs[i]
				next := rune(0)
				if i+1 < len(rs) {
					next = rs[i+1]
				}
				boundary = unicode.IsUpper(cur) && (unicode.IsLower(prev) ||
					unicode.IsUpper(prev) && unicode.IsLower(next))
			}
			if boundary {
				tok := rs[start:i]
				b.WriteRune(unicode.ToUpper(tok[0]))
				b.WriteString(strings.ToLower(string(tok[1:])))
				start = i
			}
		}
	}
	return b.String()
}
