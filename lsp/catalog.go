package lsp

// What completion and hover know: the fields, the optimized
// integrations, the intrinsic and JSONata functions. The wording is
// stepd's, after the Amazon States Language specification and the AWS
// Step Functions developer guide.

// fieldDocs says what each field means.
var fieldDocs = map[string]string{
	"Comment":                        "A description for people; not evaluated.",
	"StartAt":                        "The name of the state the machine (or branch, or item processor) starts with.",
	"States":                         "The states, by name. Names are unique in the whole state machine, at most 80 characters.",
	"TimeoutSeconds":                 "The most seconds the execution (or the state) may run before it fails with States.Timeout.",
	"Version":                        "The version of the Amazon States Language (1.0).",
	"QueryLanguage":                  "JSONPath (the default) or JSONata: how the state's fields select and build data. A state may opt into JSONata in a JSONPath machine, not back.",
	"Type":                           "The state's type: Task, Pass, Choice, Wait, Succeed, Fail, Parallel or Map.",
	"Next":                           "The name of the state to run after this one (in the same scope).",
	"End":                            "true: the execution (or branch, or iteration) ends after this state.",
	"InputPath":                      "JSONPath: selects part of the state's input to work on ($ by default; null gives {}).",
	"OutputPath":                     "JSONPath: selects part of the state's result to pass on ($ by default; null gives {}).",
	"ResultPath":                     "JSONPath: where the state's result goes in its input ($ replaces the input; null discards the result).",
	"Parameters":                     "JSONPath: the payload template sent to the task (or given to a Pass, Parallel or Map); members ending in .$ take a path or an intrinsic function call.",
	"ResultSelector":                 "JSONPath: a payload template applied to the task's result before ResultPath.",
	"Result":                         "Pass: the fixed value the state outputs (not evaluated).",
	"Arguments":                      "JSONata: the arguments sent to the task (or given to a Parallel or Map); strings in {% %} are expressions.",
	"Output":                         "JSONata: the state's output; $states.result is the task's result.",
	"Assign":                         "Variables to set after the state: names and values (paths or expressions), visible to the states that follow.",
	"Resource":                       "The ARN of what the Task calls: a Lambda function, an activity, an optimized integration (arn:aws:states:::service:action[.sync|.waitForTaskToken]) or an AWS SDK action (arn:aws:states:::aws-sdk:service:action).",
	"Retry":                          "Retriers: for the errors in ErrorEquals, try again after IntervalSeconds, growing by BackoffRate, up to MaxAttempts.",
	"Catch":                          "Catchers: for the errors in ErrorEquals, go to Next with the error output.",
	"TimeoutSecondsPath":             "JSONPath: the task's timeout, read from the input.",
	"HeartbeatSeconds":               "The most seconds between heartbeats of a task before it fails with States.HeartbeatTimeout.",
	"HeartbeatSecondsPath":           "JSONPath: the heartbeat interval, read from the input.",
	"Credentials":                    "A RoleArn the Task assumes to call its resource.",
	"Choices":                        "Choice rules, tried in order: the first that matches names the Next state.",
	"Default":                        "The state to go to when no Choice rule matches (without it, States.NoChoiceMatched).",
	"Condition":                      "JSONata: a Choice rule's condition, an expression that gives true or false.",
	"Variable":                       "JSONPath: the value a Choice rule compares.",
	"And":                            "A Choice rule that matches when all of its rules match.",
	"Or":                             "A Choice rule that matches when any of its rules matches.",
	"Not":                            "A Choice rule that matches when its rule does not.",
	"Seconds":                        "Wait: how many seconds to wait.",
	"SecondsPath":                    "JSONPath: the seconds to wait, read from the input.",
	"Timestamp":                      "Wait: the time to wait until (RFC 3339).",
	"TimestampPath":                  "JSONPath: the time to wait until, read from the input.",
	"Error":                          "Fail: the error name.",
	"Cause":                          "Fail: the cause, a description of the failure.",
	"ErrorPath":                      "JSONPath: the error name, read from the input.",
	"CausePath":                      "JSONPath: the cause, read from the input.",
	"Branches":                       "Parallel: the state machines run at the same time, each on the state's input; the output is the array of their outputs.",
	"ItemProcessor":                  "Map: the state machine run for each item, with ProcessorConfig (Mode INLINE or DISTRIBUTED).",
	"Iterator":                       "Map (legacy name of ItemProcessor): the state machine run for each item.",
	"ProcessorConfig":                "Map's ItemProcessor: Mode (INLINE or DISTRIBUTED) and, for DISTRIBUTED, ExecutionType (STANDARD or EXPRESS).",
	"ItemsPath":                      "JSONPath: the array of items in the input ($ by default).",
	"Items":                          "JSONata: the array of items (or an expression giving it).",
	"ItemSelector":                   "Map: a template that builds each iteration's input ($states.context.Map.Item.Value is the item).",
	"MaxConcurrency":                 "Map: the most iterations run at the same time (0: no limit).",
	"MaxConcurrencyPath":             "JSONPath: MaxConcurrency, read from the input.",
	"ToleratedFailureCount":          "Distributed Map: how many items may fail before the Map Run fails.",
	"ToleratedFailureCountPath":      "JSONPath: ToleratedFailureCount, read from the input.",
	"ToleratedFailurePercentage":     "Distributed Map: the percentage of items that may fail before the Map Run fails.",
	"ToleratedFailurePercentagePath": "JSONPath: ToleratedFailurePercentage, read from the input.",
	"ItemReader":                     "Distributed Map: where the items come from (an S3 object or the objects under a prefix).",
	"ItemBatcher":                    "Distributed Map: give each child execution a batch of items (MaxItemsPerBatch, MaxInputBytesPerBatch).",
	"ResultWriter":                   "Distributed Map: write the children's results to S3 instead of the state's output.",
	"Label":                          "Distributed Map: a label for the Map Run's child executions.",
	"ErrorEquals":                    "The error names a retrier or catcher handles; States.ALL matches any, alone and last.",
	"IntervalSeconds":                "Retry: seconds before the first retry (1 by default).",
	"MaxAttempts":                    "Retry: the most retries (3 by default; 0 never retries).",
	"BackoffRate":                    "Retry: what the interval is multiplied by after each attempt (2.0 by default).",
	"MaxDelaySeconds":                "Retry: the longest interval between retries.",
	"JitterStrategy":                 "Retry: FULL randomizes each interval, NONE (default) does not.",
}

// integration is an optimized integration's Resource.
type integration struct {
	arn  string
	what string
}

// integrations are the Resource ARNs of the optimized integrations
// offered in completion, with what each calls.
var integrations = []integration{
	{"arn:aws:states:::lambda:invoke", "AWS Lambda Invoke: calls the function FunctionName with Payload; the output holds Payload, StatusCode …"},
	{"arn:aws:states:::lambda:invoke.waitForTaskToken", "AWS Lambda Invoke, then waits for SendTaskSuccess/SendTaskFailure with the task token"},
	{"arn:aws:states:::sns:publish", "Amazon SNS Publish: a message to TopicArn (or TargetArn, PhoneNumber)"},
	{"arn:aws:states:::sns:publish.waitForTaskToken", "Amazon SNS Publish, then waits for the task token"},
	{"arn:aws:states:::sqs:sendMessage", "Amazon SQS SendMessage: MessageBody to QueueUrl"},
	{"arn:aws:states:::sqs:sendMessage.waitForTaskToken", "Amazon SQS SendMessage, then waits for the task token"},
	{"arn:aws:states:::dynamodb:getItem", "Amazon DynamoDB GetItem: Key from TableName"},
	{"arn:aws:states:::dynamodb:putItem", "Amazon DynamoDB PutItem: Item into TableName"},
	{"arn:aws:states:::dynamodb:updateItem", "Amazon DynamoDB UpdateItem: UpdateExpression on Key of TableName"},
	{"arn:aws:states:::dynamodb:deleteItem", "Amazon DynamoDB DeleteItem: Key from TableName"},
	{"arn:aws:states:::events:putEvents", "Amazon EventBridge PutEvents: Entries onto event buses"},
	{"arn:aws:states:::events:putEvents.waitForTaskToken", "Amazon EventBridge PutEvents, then waits for the task token"},
	{"arn:aws:states:::states:startExecution", "AWS Step Functions StartExecution: starts StateMachineArn with Input, and goes on"},
	{"arn:aws:states:::states:startExecution.sync", "AWS Step Functions StartExecution and waits for the child execution; the output is DescribeExecution's, Output as a JSON string"},
	{"arn:aws:states:::states:startExecution.sync:2", "AWS Step Functions StartExecution and waits for the child execution; the output is DescribeExecution's, Output as JSON"},
	{"arn:aws:states:::states:startExecution.waitForTaskToken", "AWS Step Functions StartExecution, then waits for the task token"},
	{"arn:aws:states:::http:invoke", "HTTP Task: calls an HTTPS API (ApiEndpoint, Method, Authentication.ConnectionArn …)"},
	{"arn:aws:states:::ecs:runTask", "Amazon ECS RunTask: starts a task and goes on"},
	{"arn:aws:states:::ecs:runTask.sync", "Amazon ECS RunTask and waits for the task to stop"},
	{"arn:aws:states:::ecs:runTask.waitForTaskToken", "Amazon ECS RunTask, then waits for the task token"},
	{"arn:aws:states:::batch:submitJob", "AWS Batch SubmitJob and goes on"},
	{"arn:aws:states:::batch:submitJob.sync", "AWS Batch SubmitJob and waits for the job"},
	{"arn:aws:states:::glue:startJobRun", "AWS Glue StartJobRun and goes on"},
	{"arn:aws:states:::glue:startJobRun.sync", "AWS Glue StartJobRun and waits for the run"},
	{"arn:aws:states:::codebuild:startBuild", "AWS CodeBuild StartBuild and goes on"},
	{"arn:aws:states:::codebuild:startBuild.sync", "AWS CodeBuild StartBuild and waits for the build"},
	{"arn:aws:states:::athena:startQueryExecution", "Amazon Athena StartQueryExecution and goes on"},
	{"arn:aws:states:::athena:startQueryExecution.sync", "Amazon Athena StartQueryExecution and waits for the query"},
	{"arn:aws:states:::apigateway:invoke", "Amazon API Gateway: calls an API (ApiEndpoint, Method, Stage, Path)"},
	{"arn:aws:states:::apigateway:invoke.waitForTaskToken", "Amazon API Gateway call, then waits for the task token"},
	{"arn:aws:states:::bedrock:invokeModel", "Amazon Bedrock InvokeModel: ModelId with Body"},
	{"arn:aws:states:::s3:getObject", "Distributed Map ItemReader: reads the items from one S3 object"},
	{"arn:aws:states:::s3:listObjectsV2", "Distributed Map ItemReader: the objects under an S3 prefix"},
	{"arn:aws:states:::s3:putObject", "Distributed Map ResultWriter: writes the results to S3"},
}

// intrinsics are the intrinsic functions with their arguments.
var intrinsics = []struct{ name, sig string }{
	{"States.Format", "(template, args…): the template with each {} replaced by the next argument"},
	{"States.StringToJson", "(string): the JSON value the string holds"},
	{"States.JsonToString", "(value): the value as JSON text"},
	{"States.Array", "(values…): an array of the arguments"},
	{"States.ArrayPartition", "(array, size): the array in chunks of size"},
	{"States.ArrayContains", "(array, value): whether the array holds the value"},
	{"States.ArrayRange", "(first, last, step): the numbers from first to last"},
	{"States.ArrayGetItem", "(array, index): the item at index"},
	{"States.ArrayLength", "(array): the number of items"},
	{"States.ArrayUnique", "(array): the items without duplicates"},
	{"States.Base64Encode", "(string): the string in base64"},
	{"States.Base64Decode", "(string): the base64 string decoded"},
	{"States.Hash", "(value, algorithm): the hash (MD5, SHA-1, SHA-256, SHA-384, SHA-512) in hex"},
	{"States.JsonMerge", "(object, object, false): the objects merged (shallow)"},
	{"States.MathRandom", "(start, end[, seed]): a random integer in [start, end)"},
	{"States.MathAdd", "(number, number): the sum"},
	{"States.StringSplit", "(string, separators): the parts of the string"},
	{"States.UUID", "(): a version 4 UUID"},
}

// statesMembers are the members of JSONata's $states.
var statesMembers = []struct{ name, doc string }{
	{"input", "the state's input"},
	{"result", "the task's (or Parallel's, Map's) result, in Output and Assign"},
	{"errorOutput", "the error output, in a catcher's Output and Assign"},
	{"context", "the Context object: Execution, State, StateMachine, Task, Map"},
}

// contextPaths are the Context object's members, for $$ in JSONPath.
var contextPaths = []string{
	"$$.Execution.Id", "$$.Execution.Input", "$$.Execution.Name", "$$.Execution.RoleArn", "$$.Execution.StartTime",
	"$$.Execution.RedriveCount", "$$.Execution.RedriveTime", "$$.State.Name", "$$.State.EnteredTime", "$$.State.RetryCount",
	"$$.StateMachine.Id", "$$.StateMachine.Name", "$$.Task.Token", "$$.Map.Item.Index", "$$.Map.Item.Value", "$$.Map.Item.Source",
}

// jsonataFunctions are JSONata's functions and those AWS adds.
var jsonataFunctions = []string{
	// string
	"string", "length", "substring", "substringBefore", "substringAfter", "uppercase", "lowercase", "trim", "pad",
	"contains", "split", "join", "match", "replace", "eval", "base64encode", "base64decode", "encodeUrlComponent",
	"encodeUrl", "decodeUrlComponent", "decodeUrl", "formatNumber", "formatBase", "formatInteger", "parseInteger",
	// number
	"number", "abs", "floor", "ceil", "round", "power", "sqrt", "random",
	// aggregation
	"sum", "max", "min", "average",
	// boolean
	"boolean", "not", "exists",
	// array
	"count", "append", "sort", "reverse", "shuffle", "distinct", "zip",
	// object
	"keys", "lookup", "spread", "merge", "sift", "each", "error", "assert", "type",
	// date and time
	"now", "millis", "fromMillis", "toMillis",
	// higher order
	"map", "filter", "single", "reduce",
	// AWS Step Functions
	"partition", "range", "hash", "uuid", "parse",
}
