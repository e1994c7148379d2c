// expandbench runs KubeVirt's own expand.New(...).Expand on one request of
// bench/typical-expand.json ({"vm", "instancetype", "preference"}), with the
// specs already found (fake finders return them), as bench/expand.py's anchor.
//
//	expandbench -request typical-expand.json -rounds 1 -benchtime 1s
//	expandbench -request typical-expand.json -print
//
// Each round prints one JSON line: {"ns_op", "allocs_op", "bytes_op", "n"};
// -print prints the expanded VM instead, for bench/expand.py's check that Go
// and Python answer the same.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"testing"

	virtv1 "kubevirt.io/api/core/v1"
	"kubevirt.io/api/instancetype/v1beta1"

	"kubevirt.io/kubevirt/pkg/instancetype/expand"
	"kubevirt.io/kubevirt/pkg/testutils"
)

type request struct {
	VM           virtv1.VirtualMachine                   `json:"vm"`
	Instancetype v1beta1.VirtualMachineInstancetypeSpec `json:"instancetype"`
	Preference   v1beta1.VirtualMachinePreferenceSpec   `json:"preference"`
}

// found is both finders: the specs as a store lookup would have returned them.
type found struct {
	instancetype *v1beta1.VirtualMachineInstancetypeSpec
	preference   *v1beta1.VirtualMachinePreferenceSpec
}

func (f found) Find(*virtv1.VirtualMachine) (*v1beta1.VirtualMachineInstancetypeSpec, error) {
	return f.instancetype, nil
}

func (f found) FindPreference(*virtv1.VirtualMachine) (*v1beta1.VirtualMachinePreferenceSpec, error) {
	return f.preference, nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "expandbench: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	testing.Init()
	path := flag.String("request", "typical-expand.json", "the request file")
	rounds := flag.Int("rounds", 1, "benchmark rounds, one JSON line each")
	benchtime := flag.String("benchtime", "1s", "each round's length, as go test's -benchtime")
	print := flag.Bool("print", false, "print the expanded VM and exit")
	flag.Parse()
	if err := flag.Set("test.benchtime", *benchtime); err != nil {
		fail("-benchtime: %v", err)
	}

	data, err := os.ReadFile(*path)
	if err != nil {
		fail("%v", err)
	}
	var req request
	if err := json.Unmarshal(data, &req); err != nil {
		fail("%s: %v", *path, err)
	}
	config, _, _ := testutils.NewFakeClusterConfigUsingKVConfig(&virtv1.KubeVirtConfiguration{})
	f := found{instancetype: &req.Instancetype, preference: &req.Preference}
	expander := expand.New(config, f, f)

	expanded, err := expander.Expand(&req.VM)
	if err != nil {
		fail("expand: %v", err)
	}
	if *print {
		out, err := json.Marshal(expanded)
		if err != nil {
			fail("%v", err)
		}
		fmt.Println(string(out))
		return
	}
	for range *rounds {
		var sink *virtv1.VirtualMachine
		r := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				sink, err = expander.Expand(&req.VM)
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		_ = sink
		line, _ := json.Marshal(map[string]int64{
			"ns_op": r.NsPerOp(), "allocs_op": r.AllocsPerOp(), "bytes_op": r.AllocedBytesPerOp(), "n": int64(r.N),
		})
		fmt.Println(string(line))
	}
}
