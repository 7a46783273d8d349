package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/recfs/recfs/test/internal/vgw"
)

// TestS3PrefixMount mounts a prefix of a bucket on both backends: its
// record objects (detected by content, whatever their names), a plain
// object and a nested "dir/" must read exactly as a local directory mount
// of the same files does; the mount is read-only; `recfs ls` lists the
// prefix.
func TestS3PrefixMount(t *testing.T) {
	needFUSE(t)
	srv := startS3(t)
	local := t.TempDir()
	files := map[string][]byte{
		"gen.log":     genS3Log(t, 11, 300),
		"notes.txt":   []byte("not a record file\n"),
		"records.bin": mustRead(t, filepath.Join(vectors, "grailbio/trailer-json.rio")),
	}
	// Every reference vector (and its .json description, a plain object)
	// under dir/: dir/leveldb/..., dir/grailbio/... (the two with tens of
	// thousands of records only under `make soak`).
	for _, sub := range []string{"leveldb", "grailbio"} {
		ents, err := os.ReadDir(filepath.Join(vectors, sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !soak() && strings.HasPrefix(e.Name(), "many-") {
				continue // ten thousands of records: `make soak` compares them
			}
			files["dir/"+sub+"/"+e.Name()] = mustRead(t, filepath.Join(vectors, sub, e.Name()))
		}
	}
	for name, b := range files {
		p := filepath.Join(local, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		srv.Put(t, "tree/"+name, b)
	}
	srv.Put(t, "elsewhere.log", files["gen.log"]) // outside the prefix
	url := vgw.URL("tree/")

	r := runRecfs(t, "ls", url)
	if got, want := lastFields(r.stdout), "dir/\ngen.log\nnotes.txt\nrecords.bin\n"; r.code != 0 || got != want {
		t.Errorf("recfs ls %s: %d %q (%s), want %q", url, r.code, got, r.stderr, want)
	}

	eachBackend(t, func(t *testing.T, backend string) {
		lm, rm := newMountDir(t), newMountDir(t)
		startMount(t, local, lm, "--backend", backend)
		startMount(t, url, rm, "--backend", backend)
		if n := compareTrees(t, lm, rm); n < 600 {
			t.Errorf("compared %d files, want every record of every object", n)
		}
		for _, name := range []string{"gen.log", "records.bin", "dir/grailbio/large-items.rio", "dir/leveldb/appengine-padded-seven.log"} {
			fi, err := os.Stat(filepath.Join(rm, name))
			if err != nil || !fi.IsDir() {
				t.Errorf("%s: %v (dir %v), want a record directory", name, err, fi != nil && fi.IsDir())
			}
		}
		if got := strings.Join(dirNames(t, rm), " "); got != "dir gen.log notes.txt records.bin" {
			t.Errorf("root lists %q", got)
		}
		for _, p := range []string{rm, filepath.Join(rm, "dir"), filepath.Join(rm, "gen.log")} {
			if f, err := os.Create(filepath.Join(p, "new")); !errors.Is(err, syscall.EROFS) {
				if f != nil {
					f.Close()
				}
				t.Errorf("create in %s: %v, want EROFS", p, err)
			}
			if err := os.Mkdir(filepath.Join(p, "d"), 0o755); !errors.Is(err, syscall.EROFS) {
				t.Errorf("mkdir in %s: %v, want EROFS", p, err)
			}
		}
	})
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lastFields returns the last field of each line of out (the names of an
// ls listing), a line each.
func lastFields(out string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			b.WriteString(f[len(f)-1] + "\n")
		}
	}
	return b.String()
}
