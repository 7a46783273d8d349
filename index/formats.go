package index

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/recfs/recfs/codec"
)

// formats is the format → driver table: every format the index reads, in
// the order Detect tries them. It is the only place that lists formats.
//
// Adding a format = its codec package (framing over io.Reader/ReaderAt/
// Writer, its codec.Format constant) + its driver file here (driver_<name>.go:
// a driver and the table it builds, see driver.go) + one line in this table.
var formats = []struct {
	format codec.Format
	driver driver
}{
	{codec.RecordIO, rioDriver{}},
	{codec.RecordIOLegacy, legacyDriver{}},
	{codec.TFRecord, tfrDriver{}},
	{codec.PrometheusWAL, promDriver{}},
	{codec.EtcdWAL, etcdDriver{}},
	{codec.Kafka, kafkaDriver{}},
	{codec.LevelDB, logDriver{}},
}

// driverFor returns the driver of format f, or an error matching
// codec.ErrUnsupported for a format no driver reads.
func driverFor(f codec.Format) (driver, error) {
	for _, e := range formats {
		if e.format == f {
			return e.driver, nil
		}
	}
	return nil, fmt.Errorf("%w: format %v", codec.ErrUnsupported, f)
}

// Detect tells the format of a record file from its bytes by asking each
// driver in table order. A file that is none of the formats, or is empty,
// yields an error matching codec.ErrFormat that names what was tried.
func Detect(r io.ReaderAt, size int64) (codec.Format, error) {
	if size == 0 {
		return codec.Unknown, fmt.Errorf("%w: empty file", codec.ErrFormat)
	}
	var head [20]byte
	n, err := r.ReadAt(head[:min(int64(len(head)), size)], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return codec.Unknown, err
	}
	h := head[:n]
	for _, e := range formats {
		ok, err := e.driver.probe(r, size, h)
		if err != nil {
			return codec.Unknown, err
		}
		if ok {
			return e.format, nil
		}
	}
	for _, e := range formats {
		if p, ok := e.driver.(probeLater); ok && p.probeLate(r, size) {
			return e.format, nil
		}
	}
	tried := make([]string, len(formats))
	for i, e := range formats {
		tried[i] = e.format.String()
		if d, ok := e.driver.(prober); ok {
			tried[i] = d.tried(h)
		}
	}
	return codec.Unknown, fmt.Errorf("%w: tried %s", codec.ErrFormat, strings.Join(tried, ", "))
}

// extensioner is implemented by drivers whose format a file's name
// extension names, for a record file made by name (mkdir in a writable
// mount): the extensions, lower case with their dot.
type extensioner interface{ extensions() []string }

// FormatOfName returns the format whose files carry the extension ext
// (".rio", ".tfrecord", lower case), or codec.Unknown when none does.
func FormatOfName(ext string) codec.Format {
	for _, e := range formats {
		if d, ok := e.driver.(extensioner); ok && slices.Contains(d.extensions(), ext) {
			return e.format
		}
	}
	return codec.Unknown
}
