package e2e

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/recfs/recfs/test/internal/vgw"
)

// TestS3ErrorsInUserWords: a wrong secret, a missing bucket and missing
// credentials each say so in one plain line naming what to check, with
// none of the SDK's request ids, operation chains or log lines.
func TestS3ErrorsInUserWords(t *testing.T) {
	needBinary(t)
	srv := vgw.Start(t)
	srv.Put(t, "e/f.log", genS3Log(t, 5, 3))
	url := vgw.URL("e/f.log")
	_, key, _ := strings.Cut(strings.TrimPrefix(url, "s3://"), "/")
	run := func(env []string, args ...string) result {
		c := exec.Command(bin, args...)
		c.Env = append(append(os.Environ(), srv.Env()...), env...)
		return runPrepared(t, c)
	}
	for _, tc := range []struct {
		name string
		env  []string
		url  string
		want string
	}{
		{"wrong secret", []string{"AWS_SECRET_ACCESS_KEY=wrong"}, url,
			"recfs: access denied to " + url + " (check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or AWS_PROFILE)\n"},
		{"missing bucket", nil, "s3://no-such-bucket/" + key,
			"recfs: bucket no-such-bucket does not exist (s3://no-such-bucket/" + key + ")\n"},
		{"no credentials", []string{"AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_PROFILE=", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent",
			"AWS_CONFIG_FILE=/nonexistent", "AWS_EC2_METADATA_DISABLED=", "AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:9/"}, url,
			"recfs: no AWS credentials found for " + url + " (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)\n"},
	} {
		r := run(tc.env, "info", "--no-cache", tc.url)
		if r.code != 1 || r.stderr != tc.want {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant:\n%s", tc.name, r.code, r.stderr, tc.want)
		}
	}
	// -v shows what the SDK says, for those who need it.
	r := run([]string{"AWS_SECRET_ACCESS_KEY=wrong"}, "-v", "info", "--no-cache", url)
	if r.code != 1 || !strings.Contains(r.stderr, "403") {
		t.Errorf("-v with a wrong secret: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
