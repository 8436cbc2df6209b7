# The feedlab image: the CLI, the reference server and its workers.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY core core
COPY sim sim
COPY server server
COPY cli cli
COPY reports reports
COPY bench bench
COPY scenarios scenarios
RUN npm ci && npm prune --omit=dev
ENTRYPOINT ["node", "dist/cli/main.js"]
