package awssdk

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/stepd/stepd/task/awsmodel"
)

// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS leaves AWS's own endpoint (no call is
// made here: the resolution alone is checked).
func TestIgnoreConfiguredEndpoints(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:8000")
	api, _, _, _ := awsmodel.Operation("dynamodb", "getItem")
	a, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if e, custom := a.endpoint(context.Background(), "dynamodb", api, cfg); e != "http://127.0.0.1:8000" || !custom {
		t.Errorf("endpoint %q %v", e, custom)
	}
	t.Setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")
	if cfg, err = config.LoadDefaultConfig(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e, custom := a.endpoint(context.Background(), "dynamodb", api, cfg); e != "" || custom {
		t.Errorf("ignored: endpoint %q %v", e, custom)
	}
}
