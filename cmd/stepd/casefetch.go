package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/histcase"
	"github.com/stepd/stepd/value"
)

// sfnClient calls the Step Functions API (AWS JSON 1.0) of stepd serve or
// AWS for stepd case: the history, the definition, the Distributed Map
// children. Requests are signed (SigV4) when AWS credentials are set in
// the environment (AWS_ACCESS_KEY_ID, or AWS_PROFILE), and sent unsigned
// otherwise (a stepd serve that checks no signatures).
type sfnClient struct {
	endpoint string
	client   *http.Client
	creds    aws.CredentialsProvider // nil: unsigned
}

func newSFNClient(ctx context.Context, endpoint string) (*sfnClient, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http:// or https:// URL", endpoint)
	}
	c := &sfnClient{endpoint: strings.TrimSuffix(endpoint, "/"), client: &http.Client{Timeout: time.Minute}}
	if os.Getenv("AWS_ACCESS_KEY_ID") != "" || os.Getenv("AWS_PROFILE") != "" {
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("loading the AWS configuration: %w", err)
		}
		c.creds = cfg.Credentials
	}
	return c, nil
}

// call sends one request and decodes its answer.
func (c *sfnClient) call(ctx context.Context, region, op string, in *value.Object) (*value.Object, error) {
	body := []byte(value.String(in))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
	if c.creds != nil {
		creds, err := c.creds.Retrieve(ctx)
		if err != nil {
			return nil, fmt.Errorf("AWS credentials: %w", err)
		}
		sum := sha256.Sum256(body)
		if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "states", region, time.Now()); err != nil {
			return nil, fmt.Errorf("signing the request: %w", err)
		}
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, histcase.MaxHistoryBytes))
	if err != nil {
		return nil, err
	}
	v, err := value.Parse(data)
	o, _ := v.(*value.Object)
	if resp.StatusCode != http.StatusOK {
		typ, msg := "", strings.TrimSpace(string(data))
		if o != nil {
			t, _ := o.Get("__type")
			typ, _ = t.(string)
			if m, ok := o.Get("message"); ok {
				msg, _ = m.(string)
			}
		}
		if i := strings.LastIndexByte(typ, '#'); i >= 0 {
			typ = typ[i+1:]
		}
		return nil, fmt.Errorf("%s: %s %s (HTTP %d)", op, typ, msg, resp.StatusCode)
	}
	if err != nil || o == nil {
		return nil, fmt.Errorf("%s: the answer is not a JSON object", op)
	}
	return o, nil
}

func regionOf(execArn string) string {
	if a, err := arn.Parse(execArn); err == nil && a.Region != "" {
		return a.Region
	}
	return arn.DefaultRegion
}

// history fetches an execution's whole history, with its data, page by
// page.
func (c *sfnClient) history(ctx context.Context, execArn string) (*histcase.History, error) {
	var events []any
	token := ""
	for {
		in := value.ObjectOf("executionArn", execArn, "includeExecutionData", true, "maxResults", value.Int(1000))
		if token != "" {
			in.Set("nextToken", token)
		}
		out, err := c.call(ctx, regionOf(execArn), "GetExecutionHistory", in)
		if err != nil {
			return nil, err
		}
		evs, _ := out.Get("events")
		list, _ := evs.([]any)
		events = append(events, list...)
		next, _ := out.Get("nextToken")
		if token, _ = next.(string); token == "" {
			break
		}
	}
	return histcase.Read([]byte(value.String(value.ObjectOf("events", events))))
}

// definition fetches the definition the execution ran
// (DescribeStateMachineForExecution).
func (c *sfnClient) definition(ctx context.Context, execArn string) (string, error) {
	out, err := c.call(ctx, regionOf(execArn), "DescribeStateMachineForExecution", value.ObjectOf("executionArn", execArn))
	if err != nil {
		return "", err
	}
	d, _ := out.Get("definition")
	s, ok := d.(string)
	if !ok || s == "" {
		return "", fmt.Errorf("DescribeStateMachineForExecution gave no definition")
	}
	return s, nil
}

// children fetches the histories of the child executions of every Map
// Run of the execution (ListMapRuns, ListExecutions by Map Run). A child
// whose history cannot be had (an Express child keeps none) is listed in
// missing with the reason.
func (c *sfnClient) children(ctx context.Context, execArn string) (out []*histcase.History, missing []string, err error) {
	region := regionOf(execArn)
	runs, err := c.list(ctx, region, "ListMapRuns", "mapRuns", "mapRunArn", value.ObjectOf("executionArn", execArn))
	if err != nil {
		return nil, nil, err
	}
	for _, run := range runs {
		execs, err := c.list(ctx, region, "ListExecutions", "executions", "executionArn", value.ObjectOf("mapRunArn", run))
		if err != nil {
			missing = append(missing, fmt.Sprintf("the child executions of Map Run %s: %v", run, err))
			continue
		}
		for _, x := range execs {
			h, err := c.history(ctx, x)
			if err != nil {
				missing = append(missing, fmt.Sprintf("child execution %s: %v", x, err))
				continue
			}
			out = append(out, h)
		}
	}
	return out, missing, nil
}

// list pages through a List operation and returns member key of each item
// of its list member.
func (c *sfnClient) list(ctx context.Context, region, op, listMember, key string, in *value.Object) ([]string, error) {
	var out []string
	token := ""
	for {
		req := in.Clone()
		if token != "" {
			req.Set("nextToken", token)
		}
		resp, err := c.call(ctx, region, op, req)
		if err != nil {
			return nil, err
		}
		items, _ := resp.Get(listMember)
		list, _ := items.([]any)
		for _, it := range list {
			if o, ok := it.(*value.Object); ok {
				if v, ok := o.Get(key); ok {
					if s, ok := v.(string); ok {
						out = append(out, s)
					}
				}
			}
		}
		next, _ := resp.Get("nextToken")
		if token, _ = next.(string); token == "" {
			return out, nil
		}
	}
}
