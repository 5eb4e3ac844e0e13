package awssdk_test

import (
	"context"
	"testing"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// sqs:sendMessage.waitForTaskToken puts the task token on a real queue; a
// worker reads it there and answers with it, which completes the task.
func TestSendMessageWaitForTaskToken(t *testing.T) {
	inv := setup(t, "fauxqs")
	q := ok(t, call(t, inv, "arn:aws:states:::aws-sdk:sqs:createQueue", `{"QueueName":"stepd-callbacks"}`))
	url := get(t, q, "QueueUrl").(string)
	sm, err := asl.Parse([]byte(`{"StartAt":"Ask","States":{"Ask":{"Type":"Task",
		"Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken",
		"Parameters":{"QueueUrl":"` + url + `","MessageBody":{"question":"ready?","token.$":"$$.Task.Token"}},"End":true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := interp.Compile(sm)
	if err != nil {
		t.Fatal(err)
	}
	d := engine.New(p, engine.Config{Invoker: inv, Clock: engine.RealClock{}, Submit: true})
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:111111111111:execution:m:e", StartTime: time.Now()}
	d.Start(info, value.NewObject(0), info.StartTime)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go d.Run(ctx)
	var token string
	for token == "" {
		if ctx.Err() != nil {
			t.Fatal("no message on the queue")
		}
		got := ok(t, call(t, inv, "arn:aws:states:::aws-sdk:sqs:receiveMessage", `{"QueueUrl":"`+url+`","WaitTimeSeconds":1}`))
		msgs, _ := got.Get("Messages")
		for _, m := range asList(msgs) {
			body, err := value.ParseString(get(t, m.(*value.Object), "Body").(string))
			if err != nil {
				t.Fatal(err)
			}
			token, _ = get(t, body.(*value.Object), "token").(string)
		}
	}
	// The worker answers once the submission is in.
	for {
		err := d.Deliver(token, interp.Input{Kind: interp.TaskDone, Result: task.Result{Output: "yes"}})
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("delivering: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	<-d.Done()
	if x := d.Execution(); x.Status() != interp.Succeeded || value.String(x.Output()) != `"yes"` {
		t.Fatalf("status %s output %s", x.Status(), value.String(x.Output()))
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }
