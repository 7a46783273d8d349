package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/test/internal/vgw"
)

// TestS3Follow mounts an object with --follow on both backends and
// overwrites it with a longer version (records appended): the new records
// appear within a few seconds and read as a local mount of the new version
// does, while a record opened before the change fails its reads with EIO
// instead of mixing versions.
func TestS3Follow(t *testing.T) {
	needFUSE(t)
	srv := startS3(t)
	v1, v2, local := grownLogs(t, 21)
	eachBackend(t, func(t *testing.T, backend string) {
		key := "follow-" + backend + ".log"
		srv.Put(t, key, v1)
		mnt := newMountDir(t)
		m := startMount(t, vgw.URL(key), mnt, "--backend", backend, "--follow", "--follow-interval", "200ms")
		checkGrownFollowed(t, m, mnt, local, backend, "object", func() { srv.Put(t, key, v2) })
	})
}

// grownLogs returns the two versions of a remote log that a follow test
// serves, v1 of 300 records and v2 of 400 that starts with them (both
// from seed), and local, v2 written to a file to compare the mount with.
func grownLogs(t *testing.T, seed uint64) (v1, v2 []byte, local string) {
	t.Helper()
	v1, v2 = genS3Log(t, seed, 300), genS3Log(t, seed, 400)
	if !strings.HasPrefix(string(v2), string(v1)) {
		t.Fatal("the longer log does not start with the shorter one")
	}
	return v1, v2, writeTemp(t, "v2.log", v2)
}

// checkGrownFollowed checks a --follow mount at mnt of a remote log of 300
// records that grow replaces with the 400 records of the log at local: a
// record opened before the change fails its reads with EIO instead of
// mixing versions, the new records appear within 5 s, and the mount then
// reads as a local mount of local does. what names the remote ("object").
func checkGrownFollowed(t *testing.T, m *mount, mnt, local, backend, what string, grow func()) {
	t.Helper()
	recs := recordNames(t, mnt)
	if len(recs) != 300 {
		t.Fatalf("%d records before the change, want 300", len(recs))
	}
	held, err := os.Open(filepath.Join(mnt, recs[7]))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	buf := make([]byte, 4096)
	if _, err := held.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}

	grow()
	deadline := time.Now().Add(5 * time.Second)
	for len(recs) != 400 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		recs = recordNames(t, mnt)
	}
	if len(recs) != 400 {
		t.Fatalf("%d records 5 s after the %s grew, want 400\n%s", len(recs), what, m.stderr)
	}
	if _, err := held.ReadAt(buf, 1000); !errors.Is(err, syscall.EIO) {
		t.Errorf("read of a record opened before the change: %v, want EIO", err)
	}
	lm := newMountDir(t)
	startMount(t, local, lm, "--backend", backend)
	if n := compareTrees(t, lm, mnt); n != 400 {
		t.Errorf("compared %d records with the new version, want 400", n)
	}
}

// TestS3CatFollow: `recfs cat --follow s3://…` writes the object's records,
// and when the object is overwritten with a longer version writes that
// version from its record 0 after one line on stderr (the rule of a
// followed file that was replaced); SIGINT ends it with exit status 0.
func TestS3CatFollow(t *testing.T) {
	srv := startS3(t)
	dir := t.TempDir()
	logOf := func(name string, recs ...string) []byte {
		p := filepath.Join(dir, name)
		var b [][]byte
		for _, r := range recs {
			b = append(b, []byte(r))
		}
		recfile.WriteLog(t, p, b)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	srv.Put(t, "catfollow.log", logOf("v1.log", "first", "second", "third"))
	url := vgw.URL("catfollow.log")
	c := startCatFollow(t, "--number", url)
	first := "000000\tfirst\n000001\tsecond\n000002\tthird\n"
	c.waitOut(t, first)

	srv.Put(t, "catfollow.log", logOf("v2.log", "first", "second", "third", "fourth"))
	c.waitOut(t, first+first+"000003\tfourth\n")
	want := "recfs: " + url + " was rewritten or replaced; following it from record 0\n"
	waitUntil(t, func() (bool, string) {
		return strings.Contains(c.stderr.String(), want), "stderr " + quote(c.stderr.String()) + ", want " + quote(want)
	})
	c.interrupt(t)
}
