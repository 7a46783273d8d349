package nfs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"

	nfsc "github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/fusetest"
	"github.com/recfs/recfs/fs/serve"
	"github.com/recfs/recfs/fs/serve/servetest"
	"github.com/recfs/recfs/index"
)

// start serves tree over NFS on a loopback port until the test ends.
func start(t *testing.T, tree *fs.Tree, o Options) (*Server, *serve.Listener) {
	t.Helper()
	l, err := serve.Listen("127.0.0.1:0", serve.Limits{}, codectest.QuietLogger())
	if err != nil {
		t.Fatal(err)
	}
	if o.Logger == nil {
		o.Logger = codectest.QuietLogger()
	}
	s := New(tree, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		s.Close()
	})
	return s, l
}

// mount mounts the export with the Go NFS client of go-nfs-client.
func mount(t *testing.T, l net.Listener) *nfsc.Target {
	t.Helper()
	port := l.Addr().(*net.TCPAddr).Port
	c, err := nfsc.DialServiceAtPort("127.0.0.1", port)
	if err != nil {
		t.Fatal(err)
	}
	m := &nfsc.Mount{Client: c}
	tg, err := m.Mount("/", rpc.NewAuthUnix("recfs", 1000, 1000).Auth())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close(); c.Close() })
	return tg
}

// readFile reads the file at p through the client.
func readFile(t *testing.T, tg *nfsc.Target, p string) ([]byte, error) {
	f, err := tg.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func TestGoClientReadsEveryRecord(t *testing.T) {
	t.Parallel()
	src := fusetest.NewMemSource(500, -1, []byte("TRAILER"))
	_, l := start(t, servetest.FileTree(t, src), Options{})
	tg := mount(t, l)
	ents, err := tg.ReadDirPlus("/")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range ents {
		seen[e.Name()] = true
	}
	for n := int64(0); n < src.Len(); n++ {
		name := fs.RecordName(n, src.Len())
		if !seen[name] {
			t.Fatalf("%s not listed (%d entries)", name, len(ents))
		}
		b, err := readFile(t, tg, "/"+name)
		if err != nil || !bytes.Equal(b, fusetest.Payload(n)) {
			t.Fatalf("%s: %d bytes, %v; want %d bytes", name, len(b), err, len(fusetest.Payload(n)))
		}
	}
	if b, err := readFile(t, tg, "/trailer/000000"); err != nil || string(b) != "TRAILER" {
		t.Fatalf("trailer: %q %v", b, err)
	}
	if b, err := readFile(t, tg, "/.recfs"); err != nil || !strings.Contains(string(b), "records: 500\n") {
		t.Fatalf(".recfs: %q %v", b, err)
	}
	if _, err := readFile(t, tg, "/000500"); err == nil {
		t.Fatal("a record past the end was read")
	}
	if _, err := tg.Create("/new", 0o644); err == nil {
		t.Fatal("create succeeded")
	}
	if err := tg.Remove("/000001"); err == nil {
		t.Fatal("remove succeeded")
	}
	if src.Len() != 500 {
		t.Fatal("the source changed")
	}
}

func TestGoClientDirectoryTree(t *testing.T) {
	t.Parallel()
	src, _ := servetest.SwapFixture(t)
	long := strings.Repeat("d", 60)
	fusetest.WriteFiles(t, src, map[string]string{long + "/" + long + "/x.log": fusetest.FakeLog("deep", "deeper")})
	_, l := start(t, servetest.DirTree(t, src), Options{})
	tg := mount(t, l)
	for p, want := range map[string]string{
		"/sub/file.txt": "plain\n", "/sub/a.log/000000": "mine", "/sub/a.log/1": "mine too", "/other.txt": "other\n",
		"/" + long + "/" + long + "/x.log/000001": "deeper",
	} {
		if b, err := readFile(t, tg, p); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", p, b, err, want)
		}
	}
	ents, err := tg.ReadDirPlus("/sub")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "a.log") || !strings.Contains(got, "file.txt") {
		t.Fatalf("listing of /sub: %s", got)
	}
}

// rpcClient speaks raw ONC RPC over TCP, for calls the Go client does not
// make.
type rpcClient struct {
	c   net.Conn
	br  *bufio.Reader
	xid uint32
}

func dialRPC(t *testing.T, l net.Listener) *rpcClient {
	t.Helper()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rpcClient{c: c, br: bufio.NewReader(c)}
}

// call makes one call and returns the accept status and the result.
func (r *rpcClient) call(t *testing.T, prog, vers, proc uint32, args []byte) (uint32, []byte) {
	t.Helper()
	r.xid++
	var w xdrWriter
	for _, v := range []uint32{0, r.xid, 0, 2, prog, vers, proc, 0, 0, 0, 0} {
		w.u32(v)
	}
	w.b = append(w.b, args...)
	binary.BigEndian.PutUint32(w.b, uint32(len(w.b)-4)|1<<31)
	if _, err := r.c.Write(w.b); err != nil {
		t.Fatal(err)
	}
	var rec []byte
	for {
		var mark [4]byte
		if _, err := io.ReadFull(r.br, mark[:]); err != nil {
			t.Fatal(err)
		}
		m := binary.BigEndian.Uint32(mark[:])
		frag := make([]byte, m&^(1<<31))
		if _, err := io.ReadFull(r.br, frag); err != nil {
			t.Fatal(err)
		}
		rec = append(rec, frag...)
		if m&(1<<31) != 0 {
			break
		}
	}
	x := xdrReader{b: rec}
	if xid := x.u32(); xid != r.xid || x.u32() != 1 || x.u32() != 0 {
		t.Fatalf("reply %x to call %d", rec, r.xid)
	}
	x.u32()
	x.opaque(400)
	st := x.u32()
	if x.err != nil {
		t.Fatal(x.err)
	}
	return st, x.b
}

// rootHandle mounts "/" over raw RPC and returns its handle.
func (r *rpcClient) rootHandle(t *testing.T) []byte {
	t.Helper()
	var a xdrWriter
	a.opaque([]byte("/"))
	st, res := r.call(t, progMount, 3, 1, a.b)
	x := xdrReader{b: res}
	if st != 0 || x.u32() != 0 {
		t.Fatalf("MNT: %d %x", st, res)
	}
	return bytes.Clone(x.opaque(64))
}

// TestExport: the MOUNT service answers EXPORT (libnfs asks first), DUMP
// and UMNTALL, which go-nfs leaves unanswered.
func TestExport(t *testing.T) {
	t.Parallel()
	_, l := start(t, servetest.FileTree(t, fusetest.NewMemSource(3, -1, nil)), Options{})
	r := dialRPC(t, l)
	st, res := r.call(t, progMount, 3, mountExport, nil)
	x := xdrReader{b: res}
	if st != 0 || x.u32() != 1 || string(x.opaque(1024)) != "/" || x.u32() != 0 || x.u32() != 0 || x.err != nil || len(x.b) != 0 {
		t.Fatalf("EXPORT: status %d, %x", st, res)
	}
	if st, res := r.call(t, progMount, 3, mountDump, nil); st != 0 || !bytes.Equal(res, []byte{0, 0, 0, 0}) {
		t.Fatalf("DUMP: %d %x", st, res)
	}
	if st, res := r.call(t, progMount, 3, mountUmntAll, nil); st != 0 || len(res) != 0 {
		t.Fatalf("UMNTALL: %d %x", st, res)
	}
	r.rootHandle(t) // the connection still works, with the library's MNT
}

// readDirRaw lists the directory fh with READDIR calls of count bytes,
// calling each for every entry, and returns the number of calls.
func (r *rpcClient) readDirRaw(t *testing.T, fh []byte, count uint32, each func(name string, cookie uint64)) int {
	t.Helper()
	var cookie, verf uint64
	calls := 0
	for {
		var a xdrWriter
		a.opaque(fh)
		a.u64(cookie)
		a.u64(verf)
		a.u32(count)
		st, res := r.call(t, progNFS, 3, nfsReadDir, a.b)
		calls++
		x := xdrReader{b: res}
		if st != 0 || x.u32() != nfsOK {
			t.Fatalf("READDIR: %d %x", st, res[:min(len(res), 16)])
		}
		if x.u32() == 1 {
			x.fixed(84)
		}
		verf = x.u64()
		for x.u32() == 1 {
			x.u64()
			name := string(x.opaque(255))
			cookie = x.u64()
			each(name, cookie)
		}
		if x.u32() == 1 || x.err != nil {
			if x.err != nil {
				t.Fatal(x.err)
			}
			return calls
		}
	}
}

// TestReadDirStreams lists a directory of many records with READDIR in
// small pages: every record once, in order, in constant memory.
func TestReadDirStreams(t *testing.T) {
	n := int64(200_000)
	if testing.Short() {
		n = 20_000
	}
	_, l := start(t, servetest.FileTree(t, servetest.Synth{N: n}), Options{})
	r := dialRPC(t, l)
	root := r.rootHandle(t)
	next := int64(0)
	var peak uint64
	var ms runtime.MemStats
	calls := r.readDirRaw(t, root, 8192, func(name string, cookie uint64) {
		if name == "." || name == ".." || name == fs.InfoName {
			return
		}
		if name != fs.RecordName(next, n) {
			t.Fatalf("entry %q, want record %d", name, next)
		}
		next++
		if next%(n/4) == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	})
	if next != n {
		t.Fatalf("%d records listed, want %d", next, n)
	}
	if peak > 16<<20 {
		t.Fatalf("heap reached %d MiB", peak>>20)
	}
	t.Logf("%d records in %d calls, heap at most %.1f MiB", n, calls, float64(peak)/(1<<20))
}

func TestHandlesStable(t *testing.T) {
	t.Parallel()
	src, _ := servetest.SwapFixture(t)
	tree := servetest.DirTree(t, src)
	s1, _ := start(t, tree, Options{})
	s2, _ := start(t, tree, Options{}) // a "restarted" server
	ctx := context.Background()
	for _, p := range [][]string{nil, {"sub"}, {"sub", "a.log"}, {"sub", "a.log", "000001"}, {"sub", "a.log", ".recfs"}, {"sub", "file.txt"}} {
		h1, err := s1.toHandle(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		h2, _ := s2.toHandle(ctx, p)
		if !bytes.Equal(h1, h2) || len(h1) > maxHandle {
			t.Fatalf("%v: handles %x and %x", p, h1, h2)
		}
		_, names, err := s2.FromHandle(h1)
		if err != nil || strings.Join(names, "/") != strings.Join(p, "/") && !(len(p) == 3 && names[2] == "1") {
			t.Fatalf("%v: FromHandle gives %v, %v", p, names, err)
		}
	}
	if n := s1.paths.lru.Len(); n != 0 {
		t.Fatalf("%d long paths kept for short ones", n)
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, bytes.Repeat([]byte{'R'}, 30), append([]byte{'R', 1, byte(fs.KindDir)}, make([]byte, 61)...)} {
		if _, _, err := s1.FromHandle(bad); err == nil {
			t.Errorf("FromHandle(%x) succeeded", bad)
		}
	}
}

// TestSwapMakesHandlesStale: a handle names the entry it was made for; once
// a symbolic link to outside the tree replaces its directory, the handle
// is stale and nothing outside is read.
func TestSwapMakesHandlesStale(t *testing.T) {
	t.Parallel()
	src, outside := servetest.SwapFixture(t)
	_, l := start(t, servetest.DirTree(t, src), Options{})
	tg := mount(t, l)
	if b, err := readFile(t, tg, "/sub/file.txt"); err != nil || string(b) != "plain\n" {
		t.Fatalf("before: %q %v", b, err)
	}
	servetest.Swap(t, src+"/sub", outside)
	for _, p := range []string{"/sub/file.txt", "/sub/a.log/000000"} {
		if b, err := readFile(t, tg, p); err == nil || bytes.Contains(b, []byte("SECRET")) {
			t.Errorf("%s after the swap: %q %v", p, b, err)
		}
	}
}

// TestReadBounded: a READ asks for more than the server sends at once.
func TestReadBounded(t *testing.T) {
	t.Parallel()
	big := fusetest.NewMemSource(1, -1, nil)
	if _, err := big.Append(context.Background(), [][]byte{bytes.Repeat([]byte("z"), 3<<20)}, index.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	s, l := start(t, servetest.FileTree(t, big), Options{})
	r := dialRPC(t, l)
	fh, err := s.toHandle(context.Background(), []string{"000001"})
	if err != nil {
		t.Fatal(err)
	}
	var a xdrWriter
	a.opaque(fh)
	a.u64(0)
	a.u32(64 << 20)
	st, res := r.call(t, progNFS, 3, nfsRead, a.b)
	x := xdrReader{b: res}
	if st != 0 || x.u32() != nfsOK {
		t.Fatalf("READ: %d", st)
	}
	if x.u32() == 1 {
		x.fixed(84)
	}
	count, eof := x.u32(), x.u32()
	data := x.opaque(64 << 20)
	if count != maxRead || eof != 0 || len(data) != maxRead || x.err != nil {
		t.Fatalf("READ of 64 MiB: count %d eof %d data %d (%v)", count, eof, len(data), x.err)
	}
}

// TestAccessGrantsRead: ACCESS (answered by go-nfs, which reads a handle
// without its XDR padding) grants reading every entry, whatever the
// length of its path; libnfs's nfs-cat refuses a file otherwise.
func TestAccessGrantsRead(t *testing.T) {
	t.Parallel()
	src, _ := servetest.SwapFixture(t)
	_, l := start(t, servetest.DirTree(t, src), Options{})
	r := dialRPC(t, l)
	for _, c := range []struct{ dir, name string }{
		{"/", "sub"}, {"/sub", "file.txt"}, {"/sub", "a.log"}, {"/sub/a.log", "000000"}, {"/sub/a.log", "000001"}, {"/sub/a.log", ".recfs"},
	} {
		var a xdrWriter
		a.opaque([]byte(c.dir))
		st, res := r.call(t, progMount, 3, mountMnt, a.b)
		x := xdrReader{b: res}
		if st != 0 || x.u32() != 0 {
			t.Fatalf("MNT %s: %d %x", c.dir, st, res)
		}
		var lw xdrWriter
		lw.opaque(x.opaque(maxHandle))
		lw.opaque([]byte(c.name))
		_, res = r.call(t, progNFS, 3, 3, lw.b) // LOOKUP
		x = xdrReader{b: res}
		if x.u32() != 0 {
			t.Fatalf("LOOKUP %s in %s: %x", c.name, c.dir, res)
		}
		fh := x.opaque(maxHandle)
		if len(fh)%4 != 0 {
			t.Errorf("%s/%s: a handle of %d bytes", c.dir, c.name, len(fh))
		}
		var aw xdrWriter
		aw.opaque(fh)
		aw.u32(0x3f) // every ACCESS3 bit
		_, res = r.call(t, progNFS, 3, 4, aw.b)
		if len(res) < 8 || binary.BigEndian.Uint32(res) != 0 || binary.BigEndian.Uint32(res[len(res)-4:])&1 == 0 {
			t.Errorf("ACCESS %s/%s: %x, want READ granted", c.dir, c.name, res)
		}
	}
}

func FuzzHandleDecode(f *testing.F) {
	pt := newPathTable()
	f.Add(pt.encode(handle{kind: fs.KindRecord, epoch: 2, ino: 77, n: 5, path: "sub/a.log"}))
	f.Add(pt.encode(handle{kind: fs.KindDir, path: strings.Repeat("long/", 20)}))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := pt.decode(b)
		if err != nil {
			return
		}
		// A handle that decodes is the one encode writes for it.
		if again := pt.encode(h); !bytes.Equal(again, b) {
			t.Fatalf("%x decodes to %+v, which encodes as %x", b, h, again)
		}
	})
}
