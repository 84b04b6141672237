# The controller image: python main.py against the in-cluster config. It installs the core
# dependencies only (no extra: no embedded API server, so no --local; no codegen).
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY samplecontroller ./samplecontroller
COPY generated ./generated
COPY crds ./crds
COPY main.py ./
RUN pip install --no-cache-dir . && useradd --uid 65532 --no-create-home nonroot
USER 65532
ENTRYPOINT ["python", "main.py"]
