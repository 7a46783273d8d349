package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
	v1, v2 := genS3Log(t, 21, 300), genS3Log(t, 21, 400)
	if !strings.HasPrefix(string(v2), string(v1)) {
		t.Fatal("the longer log does not start with the shorter one")
	}
	local := filepath.Join(t.TempDir(), "v2.log")
	if err := os.WriteFile(local, v2, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"gofuse", "bazil"} {
		t.Run(backend, func(t *testing.T) {
			needBackend(t, backend)
			key := "follow-" + backend + ".log"
			srv.Put(t, key, v1)
			mnt := newMountDir(t)
			m := startMount(t, vgw.URL(key), mnt, "--backend", backend, "--follow", "--follow-interval", "200ms")
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

			srv.Put(t, key, v2)
			deadline := time.Now().Add(5 * time.Second)
			for len(recs) != 400 && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				recs = recordNames(t, mnt)
			}
			if len(recs) != 400 {
				t.Fatalf("%d records 5 s after the object grew, want 400\n%s", len(recs), m.stderr)
			}
			if _, err := held.ReadAt(buf, 1000); !errors.Is(err, syscall.EIO) {
				t.Errorf("read of a record opened before the change: %v, want EIO", err)
			}
			lm := newMountDir(t)
			startMount(t, local, lm, "--backend", backend)
			if n := compareTrees(t, lm, mnt); n != 400 {
				t.Errorf("compared %d records with the new version, want 400", n)
			}
		})
	}
}
