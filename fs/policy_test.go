package fs

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec"
)

// newFakeTree returns the tree of a fake record file of n records.
func newFakeTree(t *testing.T, n int) *Tree {
	t.Helper()
	src := &fakeRecords{}
	for i := range n {
		src.recs = append(src.recs, []byte{byte('a' + i)})
	}
	tr, _ := newFileTree(t, src)
	return tr
}

// TestPolicyMount: MountOptions with every default filled in, once.
func TestPolicyMount(t *testing.T) {
	tr := newFakeTree(t, 3)
	for _, tc := range []struct {
		name string
		o    MountOptions
		want MountPolicy
	}{
		{"defaults", MountOptions{}, MountPolicy{
			FSName: tr.Origin(), Subtype: "recfs", ReadOnly: true,
			EntryTimeout: time.Hour, AttrTimeout: time.Hour, NegativeTimeout: time.Second,
			NoOpen: true, PushAhead: DefaultPushAhead}},
		{"no push", MountOptions{PushAhead: -1}, MountPolicy{
			FSName: tr.Origin(), Subtype: "recfs", ReadOnly: true,
			EntryTimeout: time.Hour, AttrTimeout: time.Hour, NegativeTimeout: time.Second,
			NoOpen: true}},
		{"rw, push asked", MountOptions{ReadWrite: true, PushAhead: 9}, MountPolicy{
			FSName: tr.Origin(), Subtype: "recfs",
			EntryTimeout: time.Hour, AttrTimeout: time.Hour, NegativeTimeout: 0}},
		{"rw", MountOptions{ReadWrite: true}, MountPolicy{
			FSName: tr.Origin(), Subtype: "recfs",
			EntryTimeout: time.Hour, AttrTimeout: time.Hour, NegativeTimeout: 0}},
		{"follow, given names and timeouts", MountOptions{Follow: true, FSName: "src", Name: "x", AllowOther: true, Xattrs: true,
			EntryTimeout: time.Minute, AttrTimeout: 2 * time.Minute, NegativeTimeout: 3 * time.Minute}, MountPolicy{
			FSName: "src", Subtype: "x", ReadOnly: true, AllowOther: true, DefaultPermissions: true, Xattrs: true,
			EntryTimeout: time.Minute, AttrTimeout: 2 * time.Minute, NegativeTimeout: 3 * time.Minute, Follow: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := NewPolicy(tr, tc.o).Mount()
			if got.Logger == nil {
				t.Error("no logger")
			}
			got.Logger = nil
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestPolicyNodes: the per-node cache hints of read-only, following and
// writable mounts.
func TestPolicyNodes(t *testing.T) {
	ro := newFakeTree(t, 3)
	rec := Node{Kind: KindRecord, N: 1, rd: ro.Root().rd}
	file := Node{Kind: KindFile, rel: "plain"}
	p := NewPolicy(ro, MountOptions{})
	for _, tc := range []struct {
		name  string
		p     *Policy
		n     Node
		entry EntryHints
		file  OpenHints
		dir   OpenHints
	}{
		{"record", p, rec, EntryHints{time.Hour, time.Hour}, OpenHints{KeepCache: true, NoFlush: true}, OpenHints{}},
		{"record dir", p, ro.Root(), EntryHints{time.Hour, time.Hour}, OpenHints{KeepCache: true, NoFlush: true}, OpenHints{CacheDir: true, KeepCache: true}},
		{"plain file", p, file, EntryHints{time.Hour, time.Second}, OpenHints{NoFlush: true}, OpenHints{}},
		{"followed record", NewPolicy(ro, MountOptions{Follow: true}), rec, EntryHints{time.Hour, time.Hour}, OpenHints{DirectIO: true, NoFlush: true}, OpenHints{}},
		{"followed plain file", NewPolicy(ro, MountOptions{Follow: true}), file, EntryHints{time.Hour, time.Second}, OpenHints{NoFlush: true}, OpenHints{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Entry(tc.n); got != tc.entry {
				t.Errorf("Entry = %+v, want %+v", got, tc.entry)
			}
			if got := tc.p.File(tc.n, false); got != tc.file {
				t.Errorf("File = %+v, want %+v", got, tc.file)
			}
			if got := tc.p.Dir(tc.n); got != tc.dir {
				t.Errorf("Dir = %+v, want %+v", got, tc.dir)
			}
			if got := tc.p.File(tc.n, true); got != (OpenHints{DirectIO: true}) {
				t.Errorf("File(write) = %+v", got)
			}
		})
	}

	// Writable: what gains records or changes size is not cached.
	rw, _ := newWritableTree(t, codec.LevelDB, Options{})
	wp := NewPolicy(rw, MountOptions{ReadWrite: true})
	root := rw.Root()
	info, err := rw.Lookup(context.Background(), root, InfoName)
	if err != nil {
		t.Fatal(err)
	}
	c, h, err := rw.Create(context.Background(), root, "new")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, tc := range []struct {
		name  string
		n     Node
		entry EntryHints
		file  OpenHints
	}{
		{"record dir", root, EntryHints{time.Hour, 0}, OpenHints{DirectIO: true, NoFlush: true}},
		{".recfs", info, EntryHints{time.Hour, 0}, OpenHints{DirectIO: true, NoFlush: true}},
		{"pending", c, EntryHints{0, 0}, OpenHints{DirectIO: true, NoFlush: true}},
	} {
		if got := wp.Entry(tc.n); got != tc.entry {
			t.Errorf("%s: Entry = %+v, want %+v", tc.name, got, tc.entry)
		}
		if got := wp.File(tc.n, false); got != tc.file {
			t.Errorf("%s: File = %+v, want %+v", tc.name, got, tc.file)
		}
	}
	if got := wp.Dir(root); got != (OpenHints{}) {
		t.Errorf("writable record dir: Dir = %+v, want no cache", got)
	}
}

// TestPolicyXattrs: attributes answered once, with sentinels for "off"
// and "no such name".
func TestPolicyXattrs(t *testing.T) {
	tr := newFakeTree(t, 3)
	ctx := context.Background()
	off := NewPolicy(tr, MountOptions{})
	if _, err := off.Xattr(ctx, tr.Root(), "user.recfs.records"); !errors.Is(err, ErrXattrsOff) {
		t.Errorf("off: Xattr err = %v", err)
	}
	if _, err := off.XattrNames(ctx, tr.Root()); !errors.Is(err, ErrXattrsOff) {
		t.Errorf("off: XattrNames err = %v", err)
	}
	on := NewPolicy(tr, MountOptions{Xattrs: true})
	v, err := on.Xattr(ctx, tr.Root(), "user.recfs.records")
	if err != nil || string(v) != "3" {
		t.Errorf("records = %q, %v", v, err)
	}
	for _, name := range []string{"user.recfs.nope", "security.selinux"} {
		if _, err := on.Xattr(ctx, tr.Root(), name); !errors.Is(err, ErrNoXattr) || Errno(err) != 61 /* ENODATA */ {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	names, err := on.XattrNames(ctx, tr.Root())
	if err != nil || len(names) < 2 || names[0] != "user.recfs.format" || names[1] != "user.recfs.records" {
		t.Errorf("names = %q, %v", names, err)
	}
	if st := on.Statfs(); st.Bsize != 4096 || st.Frsize != 4096 || st.NameLen != 255 {
		t.Errorf("statfs = %+v", st)
	}
}

// TestOpensForWrite: every access mode but O_RDONLY, and O_TRUNC,
// O_APPEND and O_CREAT, ask for change; read-only opens with other flags
// do not.
func TestOpensForWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flags int
		want  bool
	}{
		{syscall.O_RDONLY, false},
		{syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC, false},
		{syscall.O_WRONLY, true},
		{syscall.O_RDWR, true},
		{syscall.O_RDONLY | syscall.O_TRUNC, true},
		{syscall.O_RDONLY | syscall.O_APPEND, true},
		{syscall.O_RDONLY | syscall.O_CREAT, true},
	} {
		if got := OpensForWrite(uint32(tc.flags)); got != tc.want {
			t.Errorf("OpensForWrite(%#o) = %v, want %v", tc.flags, got, tc.want)
		}
	}
}

// provingRecords is a fakeRecords whose records from proven on are a saved
// index's claims not proven yet.
type provingRecords struct {
	*fakeRecords
	proven int64
}

func (p *provingRecords) Proven(n int64) bool { return n < p.proven }

// TestPolicyUnprovenRecords: the kernel is not let cache the attributes of
// a record whose size is still a saved index's claim.
func TestPolicyUnprovenRecords(t *testing.T) {
	src := &provingRecords{fakeRecords: &fakeRecords{recs: [][]byte{[]byte("a"), []byte("b"), []byte("c")}}, proven: 2}
	tr, _ := newFileTree(t, src)
	p := NewPolicy(tr, MountOptions{})
	for n, want := range []time.Duration{time.Hour, time.Hour, noTimeout} {
		if got := p.AttrTTL(Node{Kind: KindRecord, N: int64(n), rd: tr.Root().rd}); got != want {
			t.Errorf("record %d: attribute timeout %v, want %v", n, got, want)
		}
	}
	src.proven = 3
	if got := p.AttrTTL(Node{Kind: KindRecord, N: 2, rd: tr.Root().rd}); got != time.Hour {
		t.Errorf("record 2 once proven: attribute timeout %v", got)
	}
}
