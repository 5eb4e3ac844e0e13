package awssdk

import (
	"slices"
	"strings"

	"github.com/stepd/stepd/internal/javahash"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// optimizedParams turns an optimized integration's parameters into the
// API's: the members that Step Functions lets hold any JSON value (SQS's
// MessageBody, SNS's Message, EventBridge's Detail) are sent as their JSON
// text.
func optimizedParams(c call, params any) (any, error) {
	obj, ok := params.(*value.Object)
	if !ok {
		return params, nil
	}
	text := func(o *value.Object, k string) *value.Object {
		if v, ok := o.Get(k); ok {
			if _, isString := v.(string); !isString && v != nil {
				return o.With(k, value.String(v))
			}
		}
		return o
	}
	switch c.service + ":" + c.action {
	case "sqs:sendMessage":
		return text(obj, "MessageBody"), nil
	case "sns:publish":
		return text(obj, "Message"), nil
	case "events:putEvents":
		v, ok := obj.Get("Entries")
		arr, isArr := v.([]any)
		if !ok || !isArr {
			return obj, nil
		}
		entries := make([]any, len(arr))
		for i, e := range arr {
			if eo, ok := e.(*value.Object); ok {
				e = text(eo, "Detail")
			}
			entries[i] = e
		}
		return obj.With("Entries", entries), nil
	}
	return obj, nil
}

// optimizedResult shapes an optimized integration's result as Step
// Functions does: the API's output with the SDK's HTTP metadata for
// DynamoDB, SQS and SNS; EventBridge's failed entries as an
// EventBridge.FailedEntry error.
func optimizedResult(c call, out any, resp *response) task.Result {
	obj, _ := out.(*value.Object)
	if obj == nil {
		obj = value.NewObject(0)
	}
	if c.service == "events" {
		if n, ok := obj.Get("FailedEntryCount"); ok {
			if num, ok := n.(value.Number); ok && num.Float64() > 0 {
				return task.Result{Error: "EventBridge.FailedEntry", Cause: value.String(obj)}
			}
		}
		return task.Result{Output: obj}
	}
	reqID := firstHeader(resp.header, "X-Amzn-Requestid", "X-Amz-Request-Id")
	with := obj.With("SdkHttpMetadata", httpMetadata(c, resp)).With("SdkResponseMetadata", value.ObjectOf("RequestId", reqID))
	keys := slices.Clone(with.Keys())
	slices.Sort(keys) // in Step Functions' order, by name
	sorted := value.NewObject(len(keys))
	for _, k := range keys {
		v, _ := with.Get(k)
		sorted.Set(k, v)
	}
	return task.Result{Output: sorted}
}

// headerNames are the AWS headers whose case the Go HTTP client changes,
// as AWS writes them.
var headerNames = map[string]string{
	"X-Amzn-Requestid": "x-amzn-RequestId", "X-Amz-Crc32": "x-amz-crc32", "X-Amz-Request-Id": "x-amz-request-id",
	"X-Amz-Id-2": "x-amz-id-2",
}

// lowerConnection are the services whose AWS endpoints write the
// Connection header in lower case ("connection": keep-alive), as recorded
// for SQS and SNS; DynamoDB's write "Connection".
var lowerConnection = map[string]bool{"sqs": true, "sns": true}

// httpMetadata is the SDK for Java's SdkHttpMetadata of an answer:
// HttpHeaders by name, case-insensitively (a TreeMap), and AllHttpHeaders
// in the order of a java.util.HashMap of the same names, as AWS records
// them (x-amzn-RequestId, connection, Content-Length, Date, Content-Type
// for SQS).
func httpMetadata(c call, resp *response) *value.Object {
	names := make([]string, 0, len(resp.header))
	wire := make(map[string]string, len(resp.header))
	for k := range resp.header {
		name := k
		if n, ok := headerNames[k]; ok {
			name = n
		} else if k == "Connection" && lowerConnection[c.service] {
			name = "connection"
		}
		names = append(names, name)
		wire[name] = k
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	all := value.NewObject(len(names))
	single := value.NewObject(len(names))
	for _, name := range names {
		single.Set(name, strings.Join(resp.header[wire[name]], ","))
	}
	for _, i := range javahash.Order(names) {
		name := names[i]
		vs := resp.header[wire[name]]
		arr := make([]any, len(vs))
		for i, v := range vs {
			arr[i] = v
		}
		all.Set(name, arr)
	}
	return value.ObjectOf("AllHttpHeaders", all, "HttpHeaders", single, "HttpStatusCode", value.Int(int64(resp.status)))
}
