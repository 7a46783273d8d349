package open

import "testing"

// TestKindOf pins each row's spelling: which kind a target is, from its
// spelling alone, in this link (the lean link keeps every row's spelling).
func TestKindOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		target string
		want   Kind
	}{
		{"s3://bucket", S3Prefix},
		{"s3://bucket/", S3Prefix},
		{"s3://bucket/dir/", S3Prefix},
		{"s3://bucket/dir/000001.log", S3Object},
		{"http://host/f.tfrecord", HTTP},
		{"https://host/a/b.log", HTTP},
		{"HTTPS://host/b.log", HTTP},
		{"/data/000001.log", Local},
		{"000001.log", Local},
		{"s3:/bucket/key", Local},
		{"httpdir/f.log", Local},
		{"", Local},
	} {
		if got := KindOf(c.target); got != c.want {
			t.Errorf("KindOf(%q) = %d, want %d", c.target, got, c.want)
		}
	}
}

// TestKindsTable pins the table's shape: one row per kind, every opener
// set, and Local last (it matches every target).
func TestKindsTable(t *testing.T) {
	t.Parallel()
	ks := kinds()
	seen := map[Kind]bool{}
	for i, k := range ks {
		if seen[k.kind] {
			t.Errorf("row %d: kind %d twice", i, k.kind)
		}
		seen[k.kind] = true
		if k.is == nil || k.table == nil || k.tree == nil || k.seq == nil {
			t.Errorf("row %d (kind %d): an opener or the spelling is nil", i, k.kind)
		}
	}
	if last := ks[len(ks)-1]; last.kind != Local || !last.is("anything") {
		t.Errorf("last row is kind %d; want Local, matching every target", last.kind)
	}
	for _, k := range []Kind{Local, S3Object, S3Prefix, HTTP} {
		if !seen[k] {
			t.Errorf("kind %d has no row", k)
		}
	}
}
