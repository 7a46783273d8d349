package recfsio

import (
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
)

// TestReadManyFiles reads files of several formats, some torn at the tail
// and some damaged inside, split into many small ranges: every record
// `recfs cat` gives comes out exactly once, with its file, number and
// offset, and the damage is counted.
func TestReadManyFiles(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 4 {
		tf := tfrecordBytes(t, payloads("tf"+string(rune('a'+i)), 60+i*10, 300))
		if i%2 == 1 {
			tf = tf[:len(tf)-7] // torn tail
		}
		paths = append(paths, writeFile(t, dir, "shard-"+string(rune('a'+i))+".tfrecord", tf))
	}
	ldb := leveldbBytes(t, payloads("ldb", 200, 700))
	ldb[40000] ^= 0x55 // a damaged block in the middle
	paths = append(paths, writeFile(t, dir, "db.log", ldb))
	torn := leveldbBytes(t, payloads("torn", 50, 500))
	paths = append(paths, writeFile(t, dir, "torn.log", torn[:len(torn)-100]))
	paths = append(paths, writeFile(t, dir, "gz.tfrecord.gz", gzipBytes(t, tfrecordBytes(t, payloads("gz", 80, 400)))))

	keys, damage := want(t, paths...)
	if damage == 0 {
		t.Fatal("the damaged files have no damage: the test proves nothing")
	}
	p, s := beam.NewPipelineWithRoot()
	got := beam.ParDo(s, recordKey, ReadWithMeta(s, filepath.Join(dir, "*"), Options{CacheDir: t.TempDir(), SplitBytes: 4 << 10}))
	passert.Equals(s, got, stringsAny(keys)...)
	sum := run(t, p)
	if sum.Records != int64(len(keys)) {
		t.Errorf("records counted %d, want %d", sum.Records, len(keys))
	}
	if sum.Damage.Regions != int64(damage) {
		t.Errorf("damage counted %d regions, want %d", sum.Damage.Regions, damage)
	}
	if sum.Restrictions <= int64(len(paths)) {
		t.Errorf("%d restrictions for %d files with 4 KiB splits: the files were not split", sum.Restrictions, len(paths))
	}
	if _, ok := sum.Damage.Files[paths[4]]; !ok {
		t.Errorf("damage per file %v does not name %s", sum.Damage.Files, paths[4])
	}
	t.Logf("summary %+v", sum)
}

func stringsAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
