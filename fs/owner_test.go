package fs

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
			tr, err := NewDir(dir, Options{Open: op.open, Detect: fakeDetect, Logger: quietLogger(), Owner: tc.owner, ReadWrite: tc.rw})
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
				got := want{a.Uid, a.Gid, a.Mode & 0o7777}
				if got != tc.want[i] {
					t.Errorf("entry %d (kind %v): uid %d gid %d perm %o; want %d %d %o", i, n.Kind, got.uid, got.gid, got.perm, tc.want[i].uid, tc.want[i].gid, tc.want[i].perm)
				}
			}
		})
	}
}
