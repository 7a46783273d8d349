// Command recfs-beam runs recfs's Beam source (package recfsio) on a
// runner: prism, in this process, by default; --runner and --endpoint (and
// every other Beam flag) go to Beam, for Dataflow, Flink or Spark job
// services.
//
//	recfs-beam grep PATTERN GLOB --output FILE [--shards N]
//	recfs-beam count GLOB [--output FILE]
//	recfs-beam copy GLOB --to tfrecord|leveldb --output FILE
//
// grep writes one line per record whose bytes match the regular
// expression PATTERN: FILE:N, a tab, the record with non-printable bytes
// escaped; with --shards N above 1 the lines go into up to N files
// FILE-00000-of-0000N…, written by as many workers (a shard no line falls
// in is not written). count reads every record. Both print a JSON summary line at the
// end: {"records", "bytes", "restrictions", "splits", "damage"}; count
// --output writes FILE, a tab, records, a tab, payload bytes for each file.
// copy writes every record of the files into one new file at FILE, a
// TFRecord file or a leveldb log (through recfsio.WriteTFRecord and
// WriteLeveldbLog): the records of several files and ranges arrive in no
// particular order, so the copy holds the same multiset of records, not
// their order.
// GLOB is a local glob or an s3:// URL whose key may hold one.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/recfs/recfs/beam/recfsio"
)

var (
	output     = flag.String("output", "", "grep, copy: the file matching or copied records go to (required); count: the file per-file counts go to")
	shardCount = flag.Int("shards", 1, "grep: write the lines into up to this many files FILE-00000-of-0000N…, one worker each (1: the one file FILE)")
	to         = flag.String("to", "", "copy: the format of the file written, tfrecord or leveldb (a leveldb log)")
	format     = flag.String("format", "", "the files' format (tfrecord, leveldb, recordio, kafka, ...); default: detected")
	cacheDir   = flag.String("cache-dir", "", "where workers keep saved indexes (default: the user's cache directory; - for none)")
	splitBytes = flag.Int64("split-bytes", recfsio.DefaultSplitBytes, "payload bytes of one initial range of a file")
	s3Endpoint = flag.String("s3-endpoint", "", "base URL of the S3 store (default: AWS_ENDPOINT_URL_S3, then AWS)")
	s3Region   = flag.String("s3-region", "", "S3 region (default: the AWS configuration chain's)")
	s3Path     = flag.Bool("s3-path-style", false, "path-style S3 addressing")
)

// errUsage marks a command line recfs-beam cannot run.
var errUsage = errors.New("usage: recfs-beam [flags] grep PATTERN GLOB --output FILE | count GLOB [--output FILE] | copy GLOB --to tfrecord|leveldb --output FILE")

func main() {
	flag.Parse()
	beam.Init() // a worker started by a runner serves here and exits
	if err := run(context.Background(), flag.Args(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "recfs-beam:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// run runs one command: args are what follows the flags before it; flags
// may also follow its operands.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	var ops []string
	for len(args) > 0 {
		if err := flag.CommandLine.Parse(args); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		if args = flag.Args(); len(args) > 0 {
			ops, args = append(ops, args[0]), args[1:]
		}
	}
	if len(ops) == 0 {
		return errUsage
	}
	o := recfsio.Options{Format: *format, CacheDir: *cacheDir, SplitBytes: *splitBytes,
		S3: recfsio.S3Options{Endpoint: *s3Endpoint, Region: *s3Region, PathStyle: *s3Path}}
	p, s := beam.NewPipelineWithRoot()
	switch {
	case ops[0] == "grep" && len(ops) == 3 && *output != "":
		lines := grep(s, ops[1], recfsio.ReadWithMeta(s, ops[2], o))
		if *shardCount > 1 {
			writeShards(s, *output, *shardCount, lines)
		} else {
			textio.Write(s, *output, lines)
		}
	case ops[0] == "count" && len(ops) == 2:
		if *output == "" {
			recfsio.Read(s, ops[1], o) // the counters are the result
		} else {
			textio.Write(s, *output, countFiles(s, recfsio.ReadWithMeta(s, ops[1], o)))
		}
	case ops[0] == "copy" && len(ops) == 2 && *output != "" && *to == "tfrecord":
		recfsio.WriteTFRecord(s, *output, recfsio.Read(s, ops[1], o))
	case ops[0] == "copy" && len(ops) == 2 && *output != "" && *to == "leveldb":
		recfsio.WriteLeveldbLog(s, *output, recfsio.Read(s, ops[1], o))
	default:
		return errUsage
	}
	r, err := beamx.RunWithMetrics(ctx, p)
	if err != nil {
		return err
	}
	b, err := json.Marshal(recfsio.SummaryOf(r))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}
