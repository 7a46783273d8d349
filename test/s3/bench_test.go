package s3

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/index"
	s3obj "github.com/recfs/recfs/source/s3"
	"github.com/recfs/recfs/test/internal/vgw"
)

// TestIndexThroughput (RECFS_S3_BENCH_MB=N) compares an index build of an
// N MiB leveldb log over S3 with one plain GET of the whole object to
// io.Discard, same server, same run, and reports the requests the build
// made.
func TestIndexThroughput(t *testing.T) {
	mb, _ := strconv.Atoi(os.Getenv("RECFS_S3_BENCH_MB"))
	if mb <= 0 {
		t.Skip("set RECFS_S3_BENCH_MB to run")
	}
	srv := vgw.Start(t)
	rng := rand.New(rand.NewPCG(9, 9))
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, leveldb.WriterOptions{})
	rec := make([]byte, 4096)
	for buf.Len() < mb<<20 {
		p := rec[:rng.IntN(len(rec))]
		for i := range p {
			p[i] = byte(i * 7)
		}
		if _, err := w.WriteRecord(p); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	srv.Put(t, "bench.log", buf.Bytes())
	ctx := context.Background()
	// Best of three rounds each, interleaved: the machine is shared.
	var plain, build, mem time.Duration
	var n int64
	var st s3obj.Stats
	var records int64
	best := func(d *time.Duration, v time.Duration) {
		if *d == 0 || v < *d {
			*d = v
		}
	}
	for range 3 {
		start := time.Now()
		out, err := srv.Client.API().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(vgw.Bucket), Key: aws.String("bench.log")})
		if err != nil {
			t.Fatal(err)
		}
		n, err = io.Copy(io.Discard, out.Body)
		out.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		best(&plain, time.Since(start))
		obj, err := srv.Client.Open(ctx, vgw.Bucket, "bench.log")
		if err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		tb, err := index.OpenSource(ctx, obj, index.Options{CacheDir: "-", Parallel: benchParallel()})
		if err != nil {
			t.Fatal(err)
		}
		best(&build, time.Since(start))
		st, records = obj.Stats(), tb.Len()
		obj.Close()
		start = time.Now()
		if _, err := index.Build(ctx, bytes.NewReader(buf.Bytes()), int64(buf.Len()), index.Options{}); err != nil {
			t.Fatal(err)
		}
		best(&mem, time.Since(start))
	}
	mib := float64(n) / (1 << 20)
	t.Logf("%d MiB: plain GET %.0f MiB/s (%v); index build %.0f MiB/s (%v, %d records) = %.0f%%; build made %d HEAD, %d GETs, %d MiB fetched; the same build from memory %.0f MiB/s",
		mb, mib/plain.Seconds(), plain.Round(time.Millisecond), mib/build.Seconds(), build.Round(time.Millisecond), records,
		100*plain.Seconds()/build.Seconds(), st.Heads, st.Gets, st.BytesFetched>>20, mib/mem.Seconds())
}

// benchParallel is RECFS_S3_BENCH_PARALLEL (0: the build's default).
func benchParallel() int {
	p, _ := strconv.Atoi(os.Getenv("RECFS_S3_BENCH_PARALLEL"))
	return p
}
