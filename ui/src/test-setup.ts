// Vitest setup: jest-dom matchers such as `toBeInTheDocument()`.
import "@testing-library/jest-dom/vitest";
