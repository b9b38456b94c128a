// kstatus reads Kubernetes objects as JSON (one object, a List, or a stream of either) on stdin
// and prints, for each, the status that sigs.k8s.io/cli-utils' kstatus computes for it: the
// library Flux, Argo CD, kpt and Config Sync use to decide whether a resource is healthy. One
// JSON line an object: {"kind":…,"name":…,"status":"Current|InProgress|Failed|…","message":…}.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type result struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

func main() {
	dec := json.NewDecoder(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			return
		} else if err != nil {
			fail("reading an object: %v", err)
		}
		// Unstructured's own decoder, so that integers stay int64 as the library expects.
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			fail("reading an object: %v", err)
		}
		items := []unstructured.Unstructured{*u}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				fail("reading a list: %v", err)
			}
			items = list.Items
		}
		for i := range items {
			res, err := status.Compute(&items[i])
			if err != nil {
				fail("%s/%s: %v", items[i].GetKind(), items[i].GetName(), err)
			}
			if err := out.Encode(result{items[i].GetKind(), items[i].GetName(), string(res.Status), res.Message}); err != nil {
				fail("writing: %v", err)
			}
		}
	}
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "kstatus: "+format+"\n", args...)
	os.Exit(1)
}
