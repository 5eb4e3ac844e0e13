package asl

import "testing"

// TestNotImplemented: what AWS accepts and stepd cannot run is a WARNING
// (UNSUPPORTED_FEATURE) at its place, so the definition stays valid, and
// the state keeps the first such message, which an execution entering it
// fails with (interp's TestNotImplementedFailsAtRunTime). Every feature
// that once needed it (the MANIFEST reader, WriterConfig) runs now; the
// next one that stepd cannot run goes through it.
func TestNotImplemented(t *testing.T) {
	p := &parser{}
	st := &State{Name: "M"}
	p.notImplemented(st, "/States/M/ItemReader/ReaderConfig/InputType", "stepd cannot run this state yet: the InputType '%s' is not implemented", "X")
	p.notImplemented(st, "/States/M/ResultWriter/WriterConfig", "stepd cannot run this state yet: a second field")
	if len(p.diags) != 2 || len(p.diags.Errors()) != 0 {
		t.Fatalf("diagnostics %+v: want two warnings and no error", p.diags)
	}
	d := p.diags[0]
	if d.Code != CodeUnsupported || !d.IsWarning() || d.Pointer != "/States/M/ItemReader/ReaderConfig/InputType" {
		t.Errorf("diagnostic %+v", d)
	}
	if want := "stepd cannot run this state yet: the InputType 'X' is not implemented"; st.NotImplemented != want {
		t.Errorf("the state's message %q, want the first warning's %q", st.NotImplemented, want)
	}
}
