package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/test/internal/vgw"
)

// TestRecipeS3 runs the README's S3 recipe as written against a real
// S3-compatible server (versitygw): the sample events.log uploaded as an
// object, mounted with --daemon over s3:// with only AWS_ENDPOINT_URL (and
// the credentials) in the environment; grep -rl finds the same records as in
// the local file, and recfs unmount ends the mount.
func TestRecipeS3(t *testing.T) {
	needFUSE(t)
	srv := startS3(t)
	dir := t.TempDir()
	if r := runRecfs(t, "sample", dir); r.code != 0 {
		t.Fatalf("sample: %d %s", r.code, r.stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "events.log"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Put(t, "2026/events.log", data)
	local := runCmd(t, "sh", "-c", "'"+bin+"' cat --number "+filepath.Join(dir, "events.log")+" | grep quota | cut -f1")
	want := strings.Fields(local.stdout)
	if local.code != 0 || len(want) == 0 {
		t.Fatalf("local cat --number | grep: %d %q %s", local.code, local.stdout, local.stderr)
	}
	mnt := newMountDir(t)
	if r := runRecfs(t, "mount", "--daemon", "--no-cache", vgw.URL("2026/events.log"), mnt); r.code != 0 {
		t.Fatalf("mount --daemon s3://: %d %s", r.code, r.stderr)
	}
	t.Cleanup(func() {
		if mountedAt(mnt) == "fuse.recfs" {
			runRecfs(t, "unmount", mnt)
		}
	})
	r := runCmd(t, "sh", "-c", "grep -rl quota "+mnt+" && '"+bin+"' unmount "+mnt)
	if r.code != 0 {
		t.Fatalf("grep -rl && unmount: %d %s", r.code, r.stderr)
	}
	var got []string
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, mnt+"/") { // the rest is unmount's "unmounted: …"
			got = append(got, filepath.Base(line))
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("grep -rl over s3 found %q, the local file %q", got, want)
	}
	if mountedAt(mnt) == "fuse.recfs" {
		t.Fatal("still mounted after recfs unmount")
	}
}
