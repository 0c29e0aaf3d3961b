"""Int8 quantization (`quantization="int8"`): the int8 weights with per-token activations
through fbgemm and their SmoothQuant smoothing (`quantization`), the activation ranges that
smoothing is calibrated on (`calibration`), and the AVX-512 VNNI kernels that take the int8
linear's calls where the CPU has them, bit for bit fbgemm's result (`int8_vnni_cpu`)."""
