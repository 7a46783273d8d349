package main

import (
	"strings"
	"testing"
)

// TestNeedsFull: the lean link hands exactly the command lines that need
// S3, http(s):// sources or .proto schemas to recfs-full before parsing
// them: flags before "--", operands anywhere.
func TestNeedsFull(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args string
		want string // a word of the reason; "" for none
	}{
		{"cat s3://b/k", "s3://"},
		{"mount -- s3://b/ /mnt", "s3://"},
		{"ls --s3-endpoint=http://x:9000 f", "S3 flags"},
		{"cat --s3-cache 8M f", "S3 flags"},
		{"cat --decode protobuf:M --proto a.proto f", "--proto"},
		{"cat --decode=protobuf:M --proto=a.proto f", "--proto"},
		{"cat --proto-path d f", "--proto"},
		// -o is the mount helper's, a mount, handed over once parsed.
		{"f /mnt -o ro,s3_endpoint=http://x", ""},
		{"f /mnt -oro,proto=a.proto", ""},
		{"f /mnt -o ro,decode=batch", ""},
		{"cat -oproto=a.proto f", ""},
		// After "--" only operands count.
		{"cat -- --s3-endpoint=x f", ""},
		{"cat -- --proto a.proto", ""},
		{"cat -- --http-cache", ""},
		{"cat -- ./f https://h/x.log", "http(s)://"},
		{"ls -- -- s3://b/", "s3://"},
		{"cat --decode protobuf f.rio", ""},
		{"cat --decode example https://h/x.tfrecord", "http(s)://"},
		{"ls HTTP://h/x.log", "http(s)://"},
		{"info --http-cache 8M f", "HTTP flags"},
		{"serve http f", ""},
		{"cat --sep http f", ""},
		{"mount db/000001.log /mnt", ""},
		{"append --lines x.log", ""},
		{"cat ./s3:/b/k", ""},
		{"cat --protobuf f", ""},
		{"", ""},
	}
	for _, c := range cases {
		got := needsFull(strings.Fields(c.args))
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("needsFull(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestSameBuild: recfs-full runs a command line only a lean recfs of its
// own version handed it, and its refusal names both binaries.
func TestSameBuild(t *testing.T) {
	t.Parallel()
	cases := []struct {
		leanPath, leanVersion string
		want                  []string // words of the error; nil for none
	}{
		{"/usr/bin/recfs", "(devel) rev 0123456789ab go1.24.1", nil},
		{"/usr/bin/recfs", "(devel) rev 0123456789ab+modified go1.24.1", []string{"/usr/bin/recfs ((devel) rev 0123456789ab+modified go1.24.1)", "/usr/lib/recfs-full ((devel) rev 0123456789ab go1.24.1)", "another build"}},
		{"/usr/bin/recfs", "v1.0.0 go1.24.1", []string{"v1.0.0", "make install"}},
		{"", "1", []string{"recfs (1) handed"}},
	}
	for _, c := range cases {
		err := sameBuild(c.leanPath, c.leanVersion, "/usr/lib/recfs-full", "(devel) rev 0123456789ab go1.24.1")
		if (err == nil) != (c.want == nil) {
			t.Errorf("sameBuild(%q, %q) = %v", c.leanPath, c.leanVersion, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("sameBuild(%q, %q) = %q, want it to say %q", c.leanPath, c.leanVersion, err, w)
			}
		}
	}
}
