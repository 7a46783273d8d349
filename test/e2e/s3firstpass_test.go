package e2e

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/test/internal/vgw"
)

// TestS3FirstGrepFetchesOnce: the first grep -r through an s3 mount of an
// object larger than the block cache fetches each byte a bounded number of
// times (about twice with a saved index: see below). grep's
// fts reads a directory of over 10,000 entries in inode order; while inode
// numbers were hashes of the record number, that order was random over
// the object and each 1 KiB record cost a 1 MiB block GET (a 103 MiB
// object: 35,542 GETs, 34.5 GiB fetched, 248 s; this test: 8,772 GETs,
// 736x the object).
func TestS3FirstGrepFetchesOnce(t *testing.T) {
	needFUSE(t)
	srv := startS3(t)
	rec := srv.Recorder(t)
	const n = 12000
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, leveldb.WriterOptions{})
	p := bytes.Repeat([]byte("abcdefghijklmnop"), 64) // 1 KiB
	for i := range n {
		p[0] = byte('A' + i%26)
		if _, err := w.WriteRecord(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	srv.Put(t, "g.log", buf.Bytes())
	if r := runRecfs(t, "index", "--s3-endpoint", rec.Endpoint, vgw.URL("g.log")); r.code != 0 {
		t.Fatalf("index: %d %s", r.code, r.stderr)
	}
	mnt := newMountDir(t)
	// A cache a quarter of the object: the pass streams through it.
	startMount(t, vgw.URL("g.log"), mnt, "--s3-endpoint", rec.Endpoint, "--s3-cache", "3M")
	rec.Take()
	out, err := exec.Command("grep", "-r", "-c", "zzzz-no-such", mnt).Output()
	if err == nil || len(out) == 0 {
		// grep exits 1 when nothing matched; -c prints a count per file.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("grep -r: %v", err)
		}
	}
	var gets, fetched int64
	for _, q := range rec.Take() {
		if q.Method == "GET" {
			gets++
			fetched += q.Bytes
		}
	}
	size := int64(buf.Len())
	t.Logf("first grep -r over %d records (%d bytes): %d GETs, %d bytes fetched (%.2fx the object)", n, size, gets, fetched, float64(fetched)/float64(size))
	// The index is saved, and a saved table is a hint: its proof reads the
	// object once ahead of the reads (up to 4,096 records ahead, more than
	// this cache holds), so the pass fetches the object about twice, never
	// block by block again and again.
	if fetched > size*2+2<<20 {
		t.Errorf("first grep -r fetched %d bytes in %d GETs for a %d-byte object: blocks fetched again and again", fetched, gets, size)
	}
}
