// Contracts between the two halves of the cluster twin: the simulated kube-apiserver (sim/kube/)
// and the simulated Talos nodes behind the fake talosctl (sim/talos/). sim/cluster.ts wires them.

/** What the Talos side tells the Kubernetes side when a machine reboots. */
export interface KubeNodeHooks {
  /** The machine went down: kubelet stops, Ready turns Unknown, lifecycle taints appear. */
  nodeDown(nodeName: string): void;
  /** The machine booted again with a new boot id: kubelet reports in, Ready returns (after the twin's delays). */
  nodeUp(nodeName: string, bootID: string): void;
}

/** What the Kubernetes side asks the Talos side when a simulated kubelet pulls an image for a pod. */
export interface ImagePullHooks {
  /**
   * Pull `image` on the node as containerd would: with the credential containerd loaded when it last
   * started. Returns the image digest on success, or an error text (e.g. 401 from the registry).
   */
  pull(nodeName: string, image: string): { ok: true; imageID: string } | { ok: false; error: string };
}
