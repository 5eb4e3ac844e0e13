package main

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/stepd/stepd/store/postgres/pgtest"
)

// failoverDef mixes what moving to another node must preserve: a durable
// Wait, an activity (its workers poll random nodes), a command task that fails its first attempt and is retried, and a
// .waitForTaskToken callback (the command standing in for the queue
// leaves the message in a folder; the test answers it on a random node,
// usually not the owner), a .sync:2 child (which may move to another node
// than its parent's), and a Map whose iterations wait.
const failoverDef = `{"StartAt":"Wait","States":{
 "Wait":{"Type":"Wait","SecondsPath":"$.wait","Next":"Work"},
 "Work":{"Type":"Task","Resource":"ACTIVITY","TimeoutSeconds":300,"ResultPath":"$.work","Next":"Flaky"},
 "Flaky":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:flaky","Parameters":{"id.$":"$.id"},
   "Retry":[{"ErrorEquals":["Flaky"],"IntervalSeconds":1,"MaxAttempts":3}],"ResultPath":"$.flaky","Next":"Ask"},
 "Ask":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken","TimeoutSeconds":300,
   "Parameters":{"QueueUrl":"https://sqs.us-east-1.amazonaws.com/123456789012/asks","MessageBody":{"token.$":"$$.Task.Token","id.$":"$.id"}},
   "ResultPath":"$.answer","Next":"Child"},
 "Child":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2",
   "Parameters":{"StateMachineArn":"CHILD","Input":{"id.$":"$.id","AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$":"$$.Execution.Id"}},
   "ResultSelector":{"out.$":"$.Output"},"ResultPath":"$.child","Next":"Fan"},
 "Fan":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":2,"ResultPath":"$.fan",
   "ItemProcessor":{"StartAt":"Pause","States":{"Pause":{"Type":"Wait","Seconds":1,"Next":"Double"},
     "Double":{"Type":"Pass","Parameters":{"v.$":"States.MathAdd($, $)"},"End":true}}},"Next":"Done"},
 "Done":{"Type":"Pass","Parameters":{"id.$":"$.id","work.$":"$.work","flaky.$":"$.flaky","answer.$":"$.answer","child.$":"$.child.out","fan.$":"$.fan"},"End":true}}}`

// flakyScript fails the first call for an id and succeeds after.
const flakyScript = `in=$(cat); f="$MARKS/m-$(printf %s "$in" | tr -dc 0-9)"
if [ -e "$f" ]; then echo '{"ok":true}'; else : > "$f"; echo '{"errorType":"Flaky","errorMessage":"first try"}'; exit 1; fi`

// failoverChildDef waits, then answers with its id.
const failoverChildDef = `{"StartAt":"Nap","States":{"Nap":{"Type":"Wait","Seconds":1,"Next":"Say"},
 "Say":{"Type":"Pass","Parameters":{"child.$":"$.id"},"End":true}}}`

// askScript leaves the message in $ASKS, whole (written, then renamed).
const askScript = `f="$ASKS/$(date +%s%N)-$$"; cat > "$f.tmp" && mv "$f.tmp" "$f.json" && echo '{"MessageId":"m-1"}'`

// TestFailover runs three stepd serve nodes over a PostgreSQL server of its
// own, with a busy process beside them, starts executions of the failover
// mix on all of them (each also started a second time, by name, on
// another node, which must answer the same execution), and between
// rounds kills a random node with SIGKILL (restarting it), restarts
// PostgreSQL at once (as a crash), or stops it for a while (an outage
// longer than the lease, so that every node loses its lease). Every
// execution must end SUCCEEDED with its exact output and a history whose
// event ids are consecutive, without duplicates; no node may exit on its
// own (a node that loses its lease takes a new one); while the database
// is down a node answers at once with ServiceUnavailable.
//
// By default: 100 executions, 2 kills, 1 restart, one 10 s outage, one
// busy process. With STEPD_LONG=1: 1,000 executions, 10 kills, 2 restarts,
// one 30 s outage, two busy processes. STEPD_FAILOVER_PER_ROUND sets how
// many start before each disruption.
func TestFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("failover test skipped in -short mode")
	}
	pg := pgtest.Private(t, pgtest.PrivateOptions{})
	busy(t, sized(1, 2))
	c := newCluster(t, pg.DSN(), 3)
	kills, restarts, outage := sized(2, 10), sized(1, 2), time.Duration(sized(10, 30))*time.Second
	// The disruptions, in order: the kills, with the restarts at a third
	// and two thirds and the outage in the middle.
	plan := make([]string, kills)
	for i := range plan {
		plan[i] = "kill"
	}
	plan = slices.Insert(plan, len(plan)/2, "outage")
	for k := range restarts {
		plan = slices.Insert(plan, (k+1)*len(plan)/(restarts+1), "restart")
	}
	perRound := (sized(100, 1000) + len(plan) - 1) / len(plan)
	if v := os.Getenv("STEPD_FAILOVER_PER_ROUND"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("STEPD_FAILOVER_PER_ROUND=%q: want a positive number", v)
		}
		perRound = n
	}
	ctx := context.Background()
	for round, what := range plan {
		for j := range perRound {
			c.start(round*perRound + j)
		}
		time.Sleep(time.Duration(500+rand.IntN(1500)) * time.Millisecond)
		switch what {
		case "kill":
			c.kill(rand.IntN(3))
		case "restart", "outage":
			pg.Stop("immediate")
			down := time.Now()
			if what == "outage" {
				// A node answers at once, with an error the SDKs retry.
				for i, q := range c.quick {
					t0 := time.Now()
					_, err := q.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(c.arns[0])})
					took := time.Since(t0)
					if code := apiErrorCode(err); code != "ServiceUnavailable" {
						t.Errorf("node %d while PostgreSQL is down: %v (code %q), want ServiceUnavailable", i, err, code)
					}
					t.Logf("node %d answered %s in %v while PostgreSQL was down", i, apiErrorCode(err), took.Round(time.Millisecond))
				}
				time.Sleep(outage - time.Since(down)) // the outage itself
			}
			pg.Start()
			back := time.Now()
			c.probe()
			t.Logf("PostgreSQL %s (down %v): every node ran an execution %v after it came back", what,
				back.Sub(down).Round(time.Millisecond), time.Since(back).Round(time.Millisecond))
		}
	}
	c.check(time.Duration(sized(5, 10)) * time.Minute)
	t.Logf("%d executions on 3 nodes finished through %d kills, %d PostgreSQL restarts and a %v outage; leases lost: %d",
		len(c.arns), kills, restarts, outage, c.losses.Load())
}
