package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/service"
)

func TestSigV4(t *testing.T) {
	t.Parallel()
	svc := service.New(service.Config{})
	h := api.New(svc, nil)
	h.Auth = &api.Auth{Keys: map[string]string{"AKIDSTEPD": "s3cret"}}
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer svc.Close()
	client := func(id, secret string) *sfn.Client {
		return sfn.New(sfn.Options{Region: "eu-west-1", BaseEndpoint: aws.String(srv.URL),
			Credentials: credentials.NewStaticCredentialsProvider(id, secret, "")})
	}
	ctx := context.Background()
	if _, err := client("AKIDSTEPD", "s3cret").ListStateMachines(ctx, &sfn.ListStateMachinesInput{}); err != nil {
		t.Fatalf("signed request refused: %v", err)
	}
	if _, err := client("AKIDSTEPD", "wrong").ListStateMachines(ctx, &sfn.ListStateMachinesInput{}); apiCode(err) != "InvalidSignatureException" {
		t.Errorf("wrong secret: %v", err)
	}
	if _, err := client("AKIDOTHER", "s3cret").ListStateMachines(ctx, &sfn.ListStateMachinesInput{}); apiCode(err) != "UnrecognizedClientException" {
		t.Errorf("unknown key: %v", err)
	}
	// Unsigned and stale requests.
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader("{}"))
	req.Header.Set("X-Amz-Target", "AWSStepFunctions.ListStateMachines")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("X-Amzn-Errortype") != "MissingAuthenticationTokenException" {
		t.Errorf("unsigned: %d %s", resp.StatusCode, resp.Header.Get("X-Amzn-Errortype"))
	}
	h2 := api.New(svc, nil)
	h2.Auth = &api.Auth{Keys: map[string]string{"AKIDSTEPD": "s3cret"}, Now: func() time.Time { return time.Now().Add(time.Hour) }}
	srv2 := httptest.NewServer(h2)
	defer srv2.Close()
	stale := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv2.URL), Credentials: credentials.NewStaticCredentialsProvider("AKIDSTEPD", "s3cret", "")})
	if _, err := stale.ListStateMachines(ctx, &sfn.ListStateMachinesInput{}); apiCode(err) != "InvalidSignatureException" {
		t.Errorf("clock skew: %v", err)
	}
}
