package fs

import (
	"context"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// TestOwnership checks the owner, group and permissions a directory tree
// reports for each kind of entry with and without overrides.
func TestOwnership(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.log":    fakeMagic + "one\n",
		"tool.sh":  "#!/bin/sh\n",
		"sub/":     "",
		"sub/b.rl": fakeMagic + "x\n",
	})
	if err := os.Chmod(filepath.Join(dir, "tool.sh"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "a.log"), 0o640); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(dir, "a.log"))
	srcUID, srcGID := uint32(fi.Sys().(*syscall.Stat_t).Uid), uint32(fi.Sys().(*syscall.Stat_t).Gid)
	type want struct{ uid, gid, perm uint32 }
	for _, tc := range []struct {
		name  string
		owner Ownership
		rw    bool
		// root, sub, a.log (record dir), a.log/000000, a.log/.recfs, tool.sh
		want [6]want
	}{
		{"source", Ownership{}, false, [6]want{
			{srcUID, srcGID, 0o555}, {srcUID, srcGID, 0o555}, {srcUID, srcGID, 0o550},
			{srcUID, srcGID, 0o440}, {srcUID, srcGID, 0o440}, {srcUID, srcGID, 0o550}}},
		{"uid-gid", Ownership{UID: 1234, SetUID: true, GID: 2345, SetGID: true}, false, [6]want{
			{1234, 2345, 0o555}, {1234, 2345, 0o555}, {1234, 2345, 0o550},
			{1234, 2345, 0o440}, {1234, 2345, 0o440}, {1234, 2345, 0o550}}},
		{"umask", Ownership{Umask: 0o027, SetUmask: true}, false, [6]want{
			{srcUID, srcGID, 0o550}, {srcUID, srcGID, 0o550}, {srcUID, srcGID, 0o550},
			{srcUID, srcGID, 0o440}, {srcUID, srcGID, 0o440}, {srcUID, srcGID, 0o550}}},
		{"umask-rw", Ownership{Umask: 0o022, SetUmask: true}, true, [6]want{
			{srcUID, srcGID, 0o755}, {srcUID, srcGID, 0o755}, {srcUID, srcGID, 0o755},
			{srcUID, srcGID, 0o444}, {srcUID, srcGID, 0o444}, {srcUID, srcGID, 0o555}}},
		{"noexec", Ownership{NoExec: true}, false, [6]want{
			{srcUID, srcGID, 0o555}, {srcUID, srcGID, 0o555}, {srcUID, srcGID, 0o550},
			{srcUID, srcGID, 0o440}, {srcUID, srcGID, 0o440}, {srcUID, srcGID, 0o440}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := &fakeOpener{}
			tr, err := NewDir(dir, Options{Open: op.open, Detect: fakeDetect, Logger: codectest.QuietLogger(), Owner: tc.owner, ReadWrite: tc.rw})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			ctx := context.Background()
			look := func(parent Node, name string) Node {
				n, err := tr.Lookup(ctx, parent, name)
				if err != nil {
					t.Fatalf("lookup %s: %v", name, err)
				}
				return n
			}
			rd := look(tr.Root(), "a.log")
			nodes := []Node{tr.Root(), look(tr.Root(), "sub"), rd, look(rd, "0"), look(rd, InfoName), look(tr.Root(), "tool.sh")}
			for i, n := range nodes {
				a, err := tr.Getattr(ctx, n)
				if err != nil {
					t.Fatal(err)
				}
				got := want{a.UID, a.GID, a.Mode & 0o7777}
				if got != tc.want[i] {
					t.Errorf("entry %d (kind %v): uid %d gid %d perm %o; want %d %d %o", i, n.Kind, got.uid, got.gid, got.perm, tc.want[i].uid, tc.want[i].gid, tc.want[i].perm)
				}
			}
		})
	}
}

// TestDirDots: WithDots starts a listing with "." (the directory) and ".."
// (its parent; the root's own for the root), offsets continue across them,
// and a plain listing (io/fs) has neither.
func TestDirDots(t *testing.T) {
	tr, _, _ := newFakeDirTree(t, map[string]string{"sub/a.log": fakeMagic + "one\ntwo\n"})
	ctx := context.Background()
	sub, _ := tr.Lookup(ctx, tr.Root(), "sub")
	rd, _ := tr.Lookup(ctx, sub, "a.log")
	ino := func(n Node) uint64 { a, _ := tr.Getattr(ctx, n); return a.Ino }
	for _, c := range []struct {
		n            Node
		self, parent uint64
		names        string
	}{
		{tr.Root(), ino(tr.Root()), ino(tr.Root()), ". .. sub"},
		{sub, ino(sub), ino(tr.Root()), ". .. a.log"},
		{rd, ino(rd), ino(sub), ". .. 000000 000001 .recfs"},
	} {
		d, err := tr.OpenDir(ctx, c.n)
		if err != nil {
			t.Fatal(err)
		}
		d.WithDots(ctx)
		var names []string
		var got []DirEntry
		for e, ok := d.Next(); ok; e, ok = d.Next() {
			names = append(names, e.Name)
			got = append(got, e)
		}
		if strings.Join(names, " ") != c.names || got[0].Ino != c.self || got[1].Ino != c.parent || got[2].Off != 3 {
			t.Errorf("%v: %v; want %s, . %d, .. %d", c.n.Kind, got, c.names, c.self, c.parent)
		}
		// Seek past the dots resumes at the first real entry.
		if err := d.Seek(2); err != nil {
			t.Fatal(err)
		}
		if e, _ := d.Next(); e.Name != names[2] {
			t.Errorf("after Seek(2): %q, want %q", e.Name, names[2])
		}
	}
	if ents, err := iofs.ReadDir(tr.FS(), "."); err != nil || len(ents) != 1 || ents[0].Name() != "sub" {
		t.Errorf("io/fs listing of the root: %v %v", ents, err)
	}
}
