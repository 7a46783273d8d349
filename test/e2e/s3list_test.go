package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/test/internal/vgw"
)

// TestS3PrefixList: `recfs ls s3://bucket/prefix/` prints, per object, its
// format ("other" for a plain or empty object), its size and whether its
// index is published, as `recfs ls DIR` prints a local directory; --json
// gives the same fields. Sizes and sidecars come from the listing (no HEAD),
// the format from a ranged GET of each non-empty object's first bytes. The published
// sidecar NAME.recfs-idx is neither listed nor a file of a prefix mount
// (both backends). (Before, ls printed bare names, the sidecar among them,
// and a mount showed it as a file.)
func TestS3PrefixList(t *testing.T) {
	needFUSE(t)
	srv := startS3(t)
	log := putS3Log(t, srv, "p/a.log", 31, 200)
	rio := mustRead(t, filepath.Join(vectors, "grailbio/trailer-json.rio"))
	srv.Put(t, "p/b.rio", rio)
	srv.Put(t, "p/empty", nil)
	srv.Put(t, "p/notes.txt", []byte("not a record file\n"))
	putS3Log(t, srv, "p/sub/c.log", 32, 10)
	if r := runRecfs(t, "index", "--publish", vgw.URL("p/a.log")); r.code != 0 {
		t.Fatalf("index --publish: %d %s", r.code, r.stderr)
	}
	url := vgw.URL("p/")
	rec := srv.Recorder(t)

	r := runRecfs(t, "ls", "--s3-endpoint", rec.Endpoint, url)
	want := fmt.Sprintf("leveldb %d published a.log\nrecordio %d - b.rio\nother 0 - empty\nother 18 - notes.txt\ndir - - sub/\n",
		len(log), len(rio))
	var got strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		got.WriteString(strings.Join(strings.Fields(l), " ") + "\n")
	}
	if r.code != 0 || got.String() != want {
		t.Errorf("recfs ls %s: exit %d\n%s\nwant (columns)\n%s\nstderr: %s", url, r.code, r.stdout, want, r.stderr)
	}
	// Requests: the listing, and per non-empty object a ranged GET of its
	// first 128 KiB (a probe may need one more); no HEAD.
	gets := map[string][]string{}
	reqs := rec.Take()
	for _, q := range reqs {
		switch {
		case q.Method == "HEAD":
			t.Errorf("ls made a HEAD: %v", q)
		case q.Method == "GET" && q.Range != "":
			gets[q.Path] = append(gets[q.Path], q.Range)
		}
	}
	for _, name := range []string{"a.log", "b.rio", "notes.txt"} {
		g := gets["/"+vgw.Bucket+"/p/"+name]
		if len(g) == 0 || len(g) > 2 || !strings.HasPrefix(g[0], "bytes=0-") {
			t.Errorf("ls read %s with GETs %v, want one of its first bytes (at most one more)", name, g)
		}
	}
	if len(gets) != 3 {
		t.Errorf("ls read %d objects (%v), want the 3 non-empty ones", len(gets), reqs)
	}

	// --json: the same fields.
	r = runRecfs(t, "ls", "--json", url)
	var ents []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m map[string]any
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			t.Fatalf("ls --json line %q: %v", l, err)
		}
		ents = append(ents, m)
	}
	wantJSON := []string{
		fmt.Sprintf("a.log false %d leveldb true", len(log)),
		fmt.Sprintf("b.rio false %d recordio false", len(rio)),
		"empty false 0 other false",
		"notes.txt false 18 other false",
		"sub true 0 dir false",
	}
	var gotJSON []string
	for _, m := range ents {
		gotJSON = append(gotJSON, fmt.Sprint(m["name"], " ", m["dir"], " ", m["size"], " ", m["format"], " ", m["published_index"]))
	}
	if r.code != 0 || strings.Join(gotJSON, "\n") != strings.Join(wantJSON, "\n") {
		t.Errorf("ls --json: exit %d\n%s\nwant (name dir size format published_index)\n%s", r.code, strings.Join(gotJSON, "\n"), strings.Join(wantJSON, "\n"))
	}

	eachBackend(t, func(t *testing.T, backend string) {
		mnt := newMountDir(t)
		startMount(t, url, mnt, "--backend", backend)
		if got := strings.Join(dirNames(t, mnt), " "); got != "a.log b.rio empty notes.txt sub" {
			t.Errorf("the mount lists %q, want no sidecar", got)
		}
		if _, err := os.Stat(filepath.Join(mnt, "a.log.recfs-idx")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("stat of the sidecar in the mount: %v, want ENOENT", err)
		}
		if b, err := os.ReadFile(filepath.Join(mnt, "a.log", "000007")); err != nil || len(b) == 0 {
			t.Errorf("a record of a.log: %d bytes, %v", len(b), err)
		}
	})
}
