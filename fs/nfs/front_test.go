package nfs

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// TestRecordGrowsWithData: a client that announces a 1 MiB record and
// sends 100 bytes of it makes the connection hold about what it sent, not
// what it announced (a slowloris flood of such clients would otherwise
// hold 1 MiB each).
func TestRecordGrowsWithData(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	go func() {
		var msg [4 + 100]byte
		binary.BigEndian.PutUint32(msg[:], 1<<31|1<<20)
		_, _ = client.Write(msg[:])
		client.Close()
	}()
	f := &front{s: &Server{o: Options{IdleTimeout: time.Minute, RequestTimeout: time.Minute}}, c: server,
		br: bufio.NewReaderSize(server, frontBuffer)}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := f.readRecord()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a record cut after 100 bytes: %v", err)
	}
	// What arrived plus a step, with room for the race detector and the
	// runtime; far below the megabyte announced.
	if got := after.TotalAlloc - before.TotalAlloc; got > 8*recordStep {
		t.Fatalf("reading 100 bytes of an announced 1 MiB record allocated %d bytes", got)
	}
}
