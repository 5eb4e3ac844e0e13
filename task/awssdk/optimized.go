package awssdk

import (
	"slices"
	"strings"

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
	with := obj.With("SdkHttpMetadata", httpMetadata(resp)).With("SdkResponseMetadata", value.ObjectOf("RequestId", reqID))
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

func httpMetadata(resp *response) *value.Object {
	names := make([]string, 0, len(resp.header))
	for k := range resp.header {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	all := value.NewObject(len(names))
	single := value.NewObject(len(names))
	for _, k := range names {
		name := k
		if n, ok := headerNames[k]; ok {
			name = n
		}
		vs := resp.header[k]
		arr := make([]any, len(vs))
		for i, v := range vs {
			arr[i] = v
		}
		all.Set(name, arr)
		single.Set(name, strings.Join(vs, ","))
	}
	return value.ObjectOf("AllHttpHeaders", all, "HttpHeaders", single, "HttpStatusCode", value.Int(int64(resp.status)))
}
