# Build stage: compile TypeScript to dist/.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

# Run stage: only production dependencies and the compiled output.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# Uploaded files with FILE_STORAGE=disk (the default): a volume mounted here keeps them, and
# the directory exists owned by the service's user, so a new named volume is writable.
ENV FILE_STORAGE_DIR=/app/data/files
RUN mkdir -p /app/data/files && chown -R node:node /app/data
USER node
EXPOSE 3000
CMD ["node", "dist/main.js"]
