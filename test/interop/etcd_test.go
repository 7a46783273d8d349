package interop

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/test/internal/engines"
)

// etcdRefFile reads one WAL file with etcd's own decoder (continuing the
// chain at crc records, as its ReadAll does) and returns each record as
// its walpb.Record bytes, until the end or the decoder's first error.
func etcdRefFile(t testing.TB, path string) ([][]byte, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := wal.NewDecoder(fileutil.NewFileReader(f))
	var out [][]byte
	for {
		var rec walpb.Record
		err := d.Decode(&rec)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if rec.Type == wal.CrcType {
			d.UpdateCRC(rec.Crc) // what etcd's ReadAll does at a file's start
		}
		b, err := rec.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
}

// walFiles returns the .wal files of a member/wal directory, in order.
func walFiles(t testing.TB, dir string) []string {
	re := regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-f]{16}\.wal$`)
	return engines.Files(t, dir, re.MatchString)
}

// etcdWorkload drives a running etcd through etcdctl: puts (a Kubernetes
// style key among them), deletes, a transaction, a lease granted, used and
// revoked, users and roles, a member update and a compaction.
func etcdWorkload(t testing.TB, e *engines.Etcd) {
	t.Helper()
	e.Ctl(t, "", "put", "/registry/secrets/default/db-password", "hunter2")
	for i := range 20 {
		e.Ctl(t, "", "put", fmt.Sprintf("/app/key%02d", i), fmt.Sprintf("value %d with spaces", i))
	}
	e.Ctl(t, "", "del", "/app/key03")
	e.Ctl(t, "", "del", "--prefix", "/app/key1")
	e.Ctl(t, "value(\"/app/key00\") = \"value 0 with spaces\"\n\nput /app/txn yes\n\nput /app/txn no\n\n", "txn")
	out := e.Ctl(t, "", "lease", "grant", "600")
	id := regexp.MustCompile(`lease ([0-9a-f]+) granted`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("lease grant: %q", out)
	}
	e.Ctl(t, "", "put", "--lease="+id[1], "/app/leased", "soon gone")
	e.Ctl(t, "", "lease", "revoke", id[1])
	e.Ctl(t, "", "user", "add", "alice", "--new-user-password=secret")
	e.Ctl(t, "", "role", "add", "reader")
	e.Ctl(t, "", "role", "grant-permission", "reader", "read", "/app/")
	e.Ctl(t, "", "user", "grant-role", "alice", "reader")
	members := e.Ctl(t, "", "member", "list")
	fields := strings.Split(strings.TrimSpace(strings.Split(members, "\n")[0]), ", ")
	if len(fields) >= 4 {
		e.Ctl(t, "", "member", "update", fields[0], "--peer-urls="+fields[3])
	}
	e.Ctl(t, "", "compaction", "5")
}

// TestEtcdRealWAL: Debian's etcd serves puts, deletes, a transaction,
// leases, auth and member changes and a compaction through etcdctl; every
// record of its WAL files reads back through recfs exactly as etcd's own
// decoder reads it (walpb.Record by walpb.Record), and the preallocated
// space is no damage.
func TestEtcdRealWAL(t *testing.T) {
	t.Parallel()
	e := engines.StartEtcd(t)
	etcdWorkload(t, e)
	e.Stop(t)
	files := walFiles(t, e.WALDir())
	if len(files) == 0 {
		t.Fatal("no WAL files")
	}
	var entries int
	for _, f := range files {
		want, err := etcdRefFile(t, f)
		if err != nil {
			t.Fatalf("%s: the reference fails: %v", f, err)
		}
		got, tb := recfsRecords(t, f, codec.EtcdWAL)
		codectest.SamePayloads(t, f, got, want)
		if len(tb.Damage()) > 0 {
			t.Fatalf("%s: damage %v", f, tb.Damage())
		}
		for _, b := range got {
			var rec walpb.Record
			if err := rec.Unmarshal(b); err != nil {
				t.Fatal(err)
			}
			if rec.Type == wal.EntryType {
				entries++
			}
		}
	}
	if entries < 30 {
		t.Fatalf("%d entries, want the workload's 30 or more", entries)
	}
}

// writeRefEtcdWAL writes n entries (and hard states, a snapshot record)
// with etcd's own WAL writer, cutting files of segSize bytes, and returns
// the directory.
func writeRefEtcdWAL(t testing.TB, n int, segSize int64, rng *rand.Rand) string {
	t.Helper()
	old := wal.SegmentSizeBytes
	wal.SegmentSizeBytes = segSize
	defer func() { wal.SegmentSizeBytes = old }()
	dir := filepath.Join(t.TempDir(), "wal")
	w, err := wal.Create(zap.NewNop(), dir, []byte("metadata"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		data := make([]byte, rng.Intn(3000))
		rng.Read(data)
		ents := []raftpb.Entry{{Term: 1, Index: uint64(i), Type: raftpb.EntryNormal, Data: data}}
		if err := w.Save(raftpb.HardState{Term: 1, Vote: 1, Commit: uint64(i)}, ents); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			if err := w.SaveSnapshot(walpb.Snapshot{Index: uint64(i), Term: 1, ConfState: &raftpb.ConfState{Voters: []uint64{1}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestEtcdReferenceWriter: WAL files etcd's own writer makes (several,
// each preallocated) read back through recfs as its decoder reads them.
func TestEtcdReferenceWriter(t *testing.T) {
	t.Parallel()
	dir := writeRefEtcdWAL(t, 400, 128<<10, rand.New(rand.NewSource(4)))
	files := walFiles(t, dir)
	if len(files) < 2 {
		t.Fatalf("%d files, want several", len(files))
	}
	for _, f := range files {
		want, err := etcdRefFile(t, f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		got, _ := recfsRecords(t, f, codec.EtcdWAL)
		codectest.SamePayloads(t, f, got, want)
	}
}

// TestEtcdDamagedCopies: in copies of a WAL file with a byte flipped, a
// run of bytes zeroed (a torn write) or the file cut short at random
// places, recfs keeps every record etcd's decoder returns before it stops.
func TestEtcdDamagedCopies(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(5))
	dir := writeRefEtcdWAL(t, 300, 1<<20, rng)
	clean, err := os.ReadFile(walFiles(t, dir)[0])
	if err != nil {
		t.Fatal(err)
	}
	_, tb := recfsRecords(t, walFiles(t, dir)[0], codec.EtcdWAL)
	end := tb.Info().FileSize
	if n := tb.Len(); n > 0 {
		end = tb.Offset(n-1) + 8 + tb.Size(n-1) + 8
	}
	more := 0
	for i := range 60 {
		b := append([]byte(nil), clean...)
		at := rng.Int63n(end)
		switch i % 3 {
		case 0:
			b[at] ^= byte(1 + rng.Intn(255))
		case 1:
			copy(b[at:], make([]byte, min(int64(len(b))-at, 512)))
		case 2:
			b = b[:at]
		}
		path := filepath.Join(t.TempDir(), "0000000000000000-0000000000000000.wal")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		want, _ := etcdRefFile(t, path)
		if len(want) == 0 {
			continue // not recognisable as a WAL file any more
		}
		got, _ := recfsRecords(t, path, codec.EtcdWAL)
		if keepsReference(t, fmt.Sprintf("copy %d (damage at %d)", i, at), got, want) {
			more++
		}
	}
	if more == 0 {
		t.Fatal("recfs never kept more than the reference")
	}
}
