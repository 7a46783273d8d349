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
	// A cache a quarter of the object: the pass streams through it. The
	// request counter tells what the kernel asked for (see below).
	m, snap := countingMount(t, vgw.URL("g.log"), "--s3-endpoint", rec.Endpoint, "--s3-cache", "3M")
	mnt := m.dir
	rec.Take()
	out, err := exec.Command("grep", "-r", "-c", "zzzz-no-such", mnt).Output()
	if err == nil || len(out) == 0 {
		// grep exits 1 when nothing matched; -c prints a count per file.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("grep -r: %v", err)
		}
	}
	ops := snap()
	var gets, fetched int64
	for _, q := range rec.Take() {
		if q.Method == "GET" {
			gets++
			fetched += q.Bytes
		}
	}
	size := int64(buf.Len())
	// Records the kernel asked for (READ) although the mount had stored
	// them in its page cache ahead of grep (NOTIFY_STORE): every record is
	// pushed or read, so at least this many were both. The allowance stops
	// at maxMissed blocks, so a cache that keeps nothing (every record
	// read, each a block GET) cannot raise its own limit.
	const maxMissed = 64
	missed := max(ops["READ"]+ops["NOTIFY_STORE"]-n, 0)
	t.Logf("first grep -r over %d records (%d bytes): %d GETs, %d bytes fetched (%.2fx the object); %d READs, %d records pushed, at most %d of them read again",
		n, size, gets, fetched, float64(fetched)/float64(size), ops["READ"], ops["NOTIFY_STORE"], missed)
	// The index is saved, and a saved table is a hint: its proof reads the
	// object once ahead of the reads (up to 4,096 records ahead, more than
	// this cache holds), so the pass fetches the object about twice, never
	// block by block again and again. One more block (1 MiB, the default
	// --s3-block) may be fetched for each record the kernel asked for
	// although it had been pushed: the kernel did not keep every page
	// stored ahead of grep (seen on a busy machine: up to a few dozen), and
	// by the time grep reaches such a record the pusher and the proof have
	// moved its block out of the cache, so its READ is a lone GET of the
	// whole block.
	if limit := size*2 + 2<<20 + min(missed, maxMissed)<<20; fetched > limit {
		t.Errorf("first grep -r fetched %d bytes in %d GETs for a %d-byte object (limit %d): blocks fetched again and again", fetched, gets, size, limit)
	}
}
