package open

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFIFONotOpenedToWait: a named pipe with no writer, where a record
// file is looked for, is refused by a stat of what was opened: the open
// does not wait for a writer (a FIFO swapped in after a stat used to hang
// ls DIR, and cat hung on one named).
func TestFIFONotOpenedToWait(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "text"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, size := FileFormat(p); f != "other" || size != 0 {
		t.Errorf("FileFormat(pipe) = %q, %d; want other, 0", f, size)
	}
	ents, err := DirEntries(dir)
	if err != nil || len(ents) != 2 || ents[0].Format != "other" || ents[1].Format != "other" || ents[1].Size != 5 {
		t.Errorf("DirEntries = %+v, %v; want pipe and text, both other", ents, err)
	}
	if f, _, err := openRegular(p); err == nil {
		f.Close()
		t.Errorf("openRegular(pipe) opened it")
	}
	if e, err := OpenEvery(p, Options{}); err == nil {
		e.Close()
		t.Errorf("OpenEvery(pipe) opened it")
	}
}
