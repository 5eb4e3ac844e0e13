// Package awstest prepares the environment of tests that drive the AWS SDK
// for Go against servers on 127.0.0.1.
//
// It imports nothing of stepd's and must not: only tests import it.
package awstest

import (
	"path/filepath"
	"testing"
)

// Env gives the AWS SDK test credentials, region (empty for none) and no
// configuration files, so that nothing of the machine's own AWS setup is
// read.
func Env(t *testing.T, region string) {
	t.Helper()
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIDSTEPDTEST", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_REGION": region, "AWS_DEFAULT_REGION": "",
		"AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none, "AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
}
